import FoundationEssentials

/// Finds the first syntax error in a JSON text, with its line and column (JSONDecoder's
/// own error does not say where). Strict RFC 8259 (no trailing commas, no comments), and two
/// equal keys in one object are an error.
struct JSONSyntax {
    struct Failure: Equatable {
        var line: Int
        var column: Int
        var problem: String
    }

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    static func firstError(in bytes: [UInt8]) -> Failure? {
        var scanner = JSONSyntax(bytes: bytes)
        do throws(Failure) {
            scanner.skipSpace()
            try scanner.value()
            scanner.skipSpace()
            if scanner.index < bytes.count { throw scanner.failure("unexpected text after the JSON value") }
            return nil
        } catch {
            return error
        }
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func failure(_ problem: String) -> Failure {
        let (line, column) = Self.location(of: index, in: bytes)
        return Failure(line: line, column: column, problem: problem)
    }

    /// The line and column (in characters, from 1) of the byte at `index`.
    static func location(of index: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes[0..<min(index, bytes.count)] {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    /// What is at the current position, for a message; `byte` is `current`. A character an
    /// editor or a phone puts in for a JSON one is named with what to type instead.
    private func describe(_ byte: UInt8?) -> String {
        guard let byte else { return "the end of the file" }
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        if byte >= 0x80, let scalar = ConfigurationText.scalar(at: index, in: bytes) {
            return ConfigurationText.describe(scalar)
        }
        return "byte 0x" + String(byte, radix: 16)
    }

    private mutating func value() throws(Failure) {
        depth += 1
        defer { depth -= 1 }
        if depth > 256 { throw failure("nested too deeply") }
        switch current {
        case UInt8(ascii: "{"): try object()
        case UInt8(ascii: "["): try array()
        case UInt8(ascii: "\""): try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case let byte? where byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte): try number()
        default: throw failure("expected a value, found \(describe(current))")
        }
    }

    private mutating func object() throws(Failure) {
        var keys = Set<ArraySlice<UInt8>>()
        try members(closing: UInt8(ascii: "}")) { (scanner: inout JSONSyntax) throws(Failure) in
            guard scanner.current == UInt8(ascii: "\"") else {
                throw scanner.failure("expected a key in double quotes, found \(scanner.describe(scanner.current))")
            }
            let start = scanner.index
            try scanner.string()
            // JSONDecoder keeps one of two equal keys silently: an edit that added a second
            // "rate" instead of changing the first would do nothing.
            guard keys.insert(scanner.bytes[start..<scanner.index]).inserted else {
                let name = String(decoding: scanner.bytes[(start + 1)..<(scanner.index - 1)], as: UTF8.self)
                scanner.index = start
                throw scanner.failure("key '\(name)' appears twice in one object")
            }
            scanner.skipSpace()
            guard scanner.current == UInt8(ascii: ":") else {
                throw scanner.failure("expected ':' after the key, found \(scanner.describe(scanner.current))")
            }
            scanner.index += 1
            scanner.skipSpace()
            try scanner.value()
        }
    }

    private mutating func array() throws(Failure) {
        try members(closing: UInt8(ascii: "]")) { (scanner: inout JSONSyntax) throws(Failure) in try scanner.value() }
    }

    /// The members of an object or array, from its opening bracket to `closing`: no
    /// trailing comma.
    private mutating func members(
        closing: UInt8, _ member: (inout JSONSyntax) throws(Failure) -> Void
    ) throws(Failure) {
        let close = Character(Unicode.Scalar(closing))
        index += 1
        skipSpace()
        if current == closing {
            index += 1
            return
        }
        while true {
            try member(&self)
            skipSpace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipSpace()
                if current == closing { throw failure("trailing comma before '\(close)'") }
            case closing:
                index += 1
                return
            default:
                throw failure("expected ',' or '\(close)', found \(describe(current))")
            }
        }
    }

    private mutating func string() throws(Failure) {
        index += 1
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"):
                index += 1
                guard let escaped = current else { break }
                if escaped == UInt8(ascii: "u") {
                    for _ in 0..<4 {
                        index += 1
                        guard let hex = current, (0x30...0x39).contains(hex) || (0x41...0x46).contains(hex) || (0x61...0x66).contains(hex) else {
                            throw failure("bad \\u escape in a string")
                        }
                    }
                } else if !"\"\\/bfnrt".utf8.contains(escaped) {
                    throw failure("bad escape \\\(Character(Unicode.Scalar(escaped))) in a string")
                }
                index += 1
            case 0x00..<0x20:
                throw failure(byte == 0x0A ? "string not closed before the end of the line" : "control character in a string")
            default:
                index += 1
            }
        }
        throw failure("string not closed before the end of the file")
    }

    private mutating func literal(_ word: String) throws(Failure) {
        let start = index
        for expected in word.utf8 {
            guard current == expected else {
                index = start
                throw failure("expected \(word)")
            }
            index += 1
        }
    }

    private mutating func number() throws(Failure) {
        if current == UInt8(ascii: "-") { index += 1 }
        func digits(_ scanner: inout JSONSyntax) -> Int {
            var count = 0
            while let byte = scanner.current, (0x30...0x39).contains(byte) {
                scanner.index += 1
                count += 1
            }
            return count
        }
        guard digits(&self) > 0 else { throw failure("expected a digit, found \(describe(current))") }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw failure("expected a digit after '.', found \(describe(current))") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw failure("expected a digit in the exponent, found \(describe(current))") }
        }
    }
}

extension JSONSyntax.Failure: Error {}
