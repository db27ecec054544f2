/// What phones and Windows editors do to a JSON file, caught before the JSON is read: a
/// UTF-8 byte order mark (accepted), another encoding (named, with its line and column and
/// what to do), and characters typed in for JSON's own (named by `describe`).
enum ConfigurationText {
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The bytes without a leading UTF-8 byte order mark (Notepad and some phone editors
    /// write one; RFC 8259 lets a parser ignore it).
    static func withoutByteOrderMark(_ bytes: [UInt8]) -> [UInt8] {
        bytes.starts(with: byteOrderMark) ? Array(bytes.dropFirst(byteOrderMark.count)) : bytes
    }

    /// The first place the bytes are not UTF-8, said as what to do; nil when they are.
    static func encodingProblem(_ bytes: [UInt8]) -> JSONSyntax.Failure? {
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            return JSONSyntax.Failure(line: 1, column: 1, problem: "the file is UTF-16 text: save it as UTF-8")
        }
        guard let index = firstInvalidByte(bytes) else { return nil }
        let (line, column) = JSONSyntax.location(of: index, in: bytes)
        let byte = bytes[index]
        let name = "byte 0x" + String(byte, radix: 16)
        let problem: String
        switch byte {
        case 0x93, 0x94:
            problem = "a Windows curly quote (\(name)): type a straight \" instead, and save the file as UTF-8"
        case 0x91, 0x92:
            problem = "a Windows curly apostrophe (\(name)): type a straight ' (or \" around a string) instead, and save the file as UTF-8"
        default:
            problem = "not UTF-8 text (\(name): saved as Latin-1 or Windows-1252?): save the file as UTF-8"
        }
        return JSONSyntax.Failure(line: line, column: column, problem: problem)
    }

    /// The index of the first byte that does not begin or continue a well-formed UTF-8
    /// sequence (no overlong forms, no surrogates, nothing above U+10FFFF).
    static func firstInvalidByte(_ bytes: [UInt8]) -> Int? {
        var i = 0
        while i < bytes.count {
            let lead = bytes[i]
            let continuation: Int
            var second: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0x00...0x7F: continuation = 0
            case 0xC2...0xDF: continuation = 1
            case 0xE0: continuation = 2; second = 0xA0...0xBF
            case 0xED: continuation = 2; second = 0x80...0x9F
            case 0xE1...0xEF: continuation = 2
            case 0xF0: continuation = 3; second = 0x90...0xBF
            case 0xF1...0xF3: continuation = 3
            case 0xF4: continuation = 3; second = 0x80...0x8F
            default: return i
            }
            for k in 0..<continuation {
                let at = i + 1 + k
                guard at < bytes.count else { return i }
                let range = k == 0 ? second : 0x80...0xBF
                guard range.contains(bytes[at]) else { return i }
            }
            i += 1 + continuation
        }
        return nil
    }

    /// The scalar whose UTF-8 starts at `index` (nil when it is not well formed there).
    static func scalar(at index: Int, in bytes: [UInt8]) -> Unicode.Scalar? {
        guard index < bytes.count else { return nil }
        let end = min(bytes.count, index + 4)
        var iterator = bytes[index..<end].makeIterator()
        var decoder = UTF8()
        if case let .scalarValue(scalar) = decoder.decode(&iterator) { return scalar }
        return nil
    }

    /// A character where JSON wants one of its own, named with what to type instead.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x201C, 0x201D, 0x201E, 0x201F, 0x00AB, 0x00BB, 0x2033:
            return "a curly quote '\(Character(scalar))' (type a straight \" instead: a phone or a word processor put it there)"
        case 0x2018, 0x2019, 0x201A, 0x201B, 0x2032:
            return "a curly apostrophe '\(Character(scalar))' (type a straight \" around a string instead)"
        case 0x00A0, 0x2007, 0x202F, 0x2009, 0x200B, 0xFEFF:
            return "an invisible space U+\(hex(scalar)) (type a plain space, or delete it)"
        case 0x2013, 0x2014, 0x2212:
            return "a dash '\(Character(scalar))' (type a plain - instead)"
        default:
            return "'\(Character(scalar))' (U+\(hex(scalar)))"
        }
    }

    private static func hex(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
