/// A JSON text as a tree that keeps its objects' key order, so that the page can change the
/// keys it edits and write the rest of a parent's file back as it was (sections and keys in
/// their order; the file's own spacing is not kept: it is written indented by two).
public indirect enum JSONDocument: Sendable, Equatable {
    case object([(String, JSONDocument)])
    case array([JSONDocument])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    public static func == (a: JSONDocument, b: JSONDocument) -> Bool {
        switch (a, b) {
        case let (.object(x), .object(y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case let (.array(x), .array(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.number(x), .number(y)): x == y
        case let (.bool(x), .bool(y)): x == y
        case (.null, .null): true
        default: false
        }
    }

    public struct SyntaxError: Error, Equatable {
        public var offset: Int
    }

    public static let maximumDepth = 64

    /// Parses strict JSON (RFC 8259); nil on any error (the configuration's own check names
    /// where, `JSONSyntax`).
    public init(parsing bytes: [UInt8]) throws(SyntaxError) {
        var parser = Parser(bytes: bytes)
        parser.space()
        self = try parser.value(depth: 0)
        parser.space()
        guard parser.index == bytes.count else { throw SyntaxError(offset: parser.index) }
    }

    public subscript(_ key: String) -> JSONDocument? {
        guard case let .object(members) = self else { return nil }
        return members.last { $0.0 == key }?.1
    }

    public var isObject: Bool { if case .object = self { true } else { false } }
    public var objectCount: Int { if case let .object(m) = self { m.count } else { 0 } }
    public var arrayValue: [JSONDocument]? { if case let .array(a) = self { a } else { nil } }
    public var stringValue: String? { if case let .string(s) = self { s } else { nil } }
    public var numberValue: Double? { if case let .number(n) = self { n } else { nil } }
    public var boolValue: Bool? { if case let .bool(b) = self { b } else { nil } }

    /// Sets `key` in an object: in its place when there, else at the end.
    public mutating func set(_ key: String, _ value: JSONDocument) {
        guard case var .object(members) = self else { return }
        if let i = members.firstIndex(where: { $0.0 == key }) { members[i].1 = value } else { members.append((key, value)) }
        self = .object(members)
    }

    public mutating func remove(_ key: String) {
        guard case var .object(members) = self else { return }
        members.removeAll { $0.0 == key }
        self = .object(members)
    }

    /// The text, indented by two, with a final newline.
    public var text: String {
        var out = ""
        write(into: &out, indent: "")
        return out + "\n"
    }

    private func write(into out: inout String, indent: String) {
        let inner = indent + "  "
        switch self {
        case let .object(members):
            guard !members.isEmpty else { out += "{}"; return }
            out += "{\n"
            for (i, (key, value)) in members.enumerated() {
                out += inner + HTML.jsonString(key, forHTML: false) + ": "
                value.write(into: &out, indent: inner)
                out += i == members.count - 1 ? "\n" : ",\n"
            }
            out += indent + "}"
        case let .array(items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += inner
                item.write(into: &out, indent: inner)
                out += i == items.count - 1 ? "\n" : ",\n"
            }
            out += indent + "]"
        case let .string(s): out += HTML.jsonString(s, forHTML: false)
        case let .number(n):
            if n == n.rounded(), abs(n) < 1e15 { out += String(Int(n)) } else { out += "\(n)" }
        case let .bool(b): out += b ? "true" : "false"
        case .null: out += "null"
        }
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func space() {
            while let b = current, b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { index += 1 }
        }

        func fail() -> SyntaxError { SyntaxError(offset: index) }

        mutating func value(depth: Int) throws(SyntaxError) -> JSONDocument {
            guard depth < JSONDocument.maximumDepth, let b = current else { throw fail() }
            switch b {
            case UInt8(ascii: "{"):
                index += 1
                var members: [(String, JSONDocument)] = []
                space()
                if current == UInt8(ascii: "}") { index += 1; return .object([]) }
                while true {
                    space()
                    guard current == UInt8(ascii: "\"") else { throw fail() }
                    let key = try string()
                    space()
                    guard current == UInt8(ascii: ":") else { throw fail() }
                    index += 1
                    space()
                    members.append((key, try value(depth: depth + 1)))
                    space()
                    if current == UInt8(ascii: ",") { index += 1; continue }
                    guard current == UInt8(ascii: "}") else { throw fail() }
                    index += 1
                    return .object(members)
                }
            case UInt8(ascii: "["):
                index += 1
                var items: [JSONDocument] = []
                space()
                if current == UInt8(ascii: "]") { index += 1; return .array([]) }
                while true {
                    space()
                    items.append(try value(depth: depth + 1))
                    space()
                    if current == UInt8(ascii: ",") { index += 1; continue }
                    guard current == UInt8(ascii: "]") else { throw fail() }
                    index += 1
                    return .array(items)
                }
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            default: return .number(try number())
            }
        }

        mutating func literal(_ word: String) throws(SyntaxError) {
            let w = Array(word.utf8)
            guard index + w.count <= bytes.count, Array(bytes[index..<index + w.count]) == w else { throw fail() }
            index += w.count
        }

        mutating func number() throws(SyntaxError) -> Double {
            let start = index
            while let b = current, b == UInt8(ascii: "-") || b == UInt8(ascii: "+") || b == UInt8(ascii: ".") || b == UInt8(ascii: "e")
                || b == UInt8(ascii: "E") || (b >= 0x30 && b <= 0x39)
            {
                index += 1
            }
            // JSON's numbers: no leading '+', finite (a Double that overflows is refused).
            guard index > start, bytes[start] != UInt8(ascii: "+"), let n = Double(String(decoding: bytes[start..<index], as: UTF8.self)), n.isFinite
            else { throw fail() }
            return n
        }

        mutating func string() throws(SyntaxError) -> String {
            index += 1
            var out: [UInt8] = []
            while let b = current {
                index += 1
                switch b {
                case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let e = current else { throw fail() }
                    index += 1
                    switch e {
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if code >= 0xD800, code < 0xDC00, current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") {
                            index += 2
                            let low = try hex4()
                            code = 0x10000 + ((code - 0xD800) << 10) + ((low &- 0xDC00) & 0x3FF)
                        }
                        out += Array(String(Unicode.Scalar(code).map(Character.init) ?? "\u{FFFD}").utf8)
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    default: throw fail()
                    }
                default:
                    guard b >= 0x20 else { throw fail() }
                    out.append(b)
                }
            }
            throw fail()
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard index + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else { throw fail() }
            index += 4
            return v
        }
    }
}
