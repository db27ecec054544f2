import CQREncode
import Glibc

/// How much of the symbol may be damaged and still be read (ISO/IEC 18004 levels).
public enum ErrorCorrection: String, Sendable, CaseIterable, CustomStringConvertible {
    /// About 7 % of the codewords can be restored.
    case low = "L"
    /// About 15 %: the usual choice for a screen.
    case medium = "M"
    /// About 25 %.
    case quartile = "Q"
    /// About 30 %.
    case high = "H"

    /// The most bytes one version 40 symbol holds in 8-bit mode at this level (ISO/IEC 18004, table 7).
    public var maximumBytes: Int {
        switch self {
        case .low: 2953
        case .medium: 2331
        case .quartile: 1663
        case .high: 1273
        }
    }

    public var description: String { rawValue }

    var level: QRecLevel {
        switch self {
        case .low: QR_ECLEVEL_L
        case .medium: QR_ECLEVEL_M
        case .quartile: QR_ECLEVEL_Q
        case .high: QR_ECLEVEL_H
        }
    }
}

/// Why a text could not become a QR code.
public enum QRCodeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// There is nothing to encode.
    case emptyText
    /// The text's UTF-8 bytes do not fit in the largest symbol (version 40) at this level.
    case tooLong(bytes: Int, correction: ErrorCorrection)
    /// libqrencode refused the input (EINVAL).
    case invalidInput(bytes: Int)
    /// libqrencode could not allocate memory (ENOMEM).
    case outOfMemory
    /// libqrencode failed with another errno.
    case encoderFailed(errno: Int32)

    public var description: String {
        switch self {
        case .emptyText:
            "QR code text is empty"
        case .tooLong(let bytes, let correction):
            "QR code text is \(bytes) bytes, too long for a QR code at error correction \(correction) "
                + "(at most \(correction.maximumBytes) bytes)"
        case .invalidInput(let bytes):
            "libqrencode rejected the \(bytes)-byte QR code text as invalid input"
        case .outOfMemory:
            "libqrencode ran out of memory while encoding the QR code"
        case .encoderFailed(let code):
            "libqrencode failed to encode the QR code (errno \(code))"
        }
    }
}

/// A QR code symbol: a square of dark and light modules, made by libqrencode.
///
/// The text is encoded as its UTF-8 bytes in 8-bit (byte) mode, case preserved, with the
/// smallest version that fits; this is what `qrencode -8 -l <level>` produces.
/// The matrix has no quiet zone; the renderers add one.
public struct QRCode: Sendable, Equatable {
    /// Modules per side (21 for version 1, up to 177 for version 40).
    public let size: Int
    /// The symbol version, 1...40.
    public let version: Int
    /// Row-major, `size * size` entries, `true` = dark.
    public let modules: [Bool]

    /// Whether the module at column `x`, row `y` is dark; `false` outside the symbol
    /// (the quiet zone around a QR code is light).
    public subscript(x: Int, y: Int) -> Bool {
        guard x >= 0, y >= 0, x < size, y < size else { return false }
        return modules[y * size + x]
    }

    /// Encodes `text` (its UTF-8 bytes, 8-bit mode) at the given error correction level.
    public init(encoding text: String, correction: ErrorCorrection = .medium) throws(QRCodeError) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw .emptyText }
        // libqrencode itself decides what fits (ERANGE below); this only keeps the length in an Int32.
        guard let count = Int32(exactly: bytes.count) else {
            throw .tooLong(bytes: bytes.count, correction: correction)
        }
        // QRcode_encodeData takes a length, so a NUL inside the text is encoded too.
        let result: Result<(Int, Int, [Bool]), QRCodeError> = bytes.withUnsafeBufferPointer { buffer in
            errno = 0
            guard let base = buffer.baseAddress, let code = QRcode_encodeData(count, base, 0, correction.level) else {
                let failure = errno
                switch failure {
                case ERANGE: return .failure(.tooLong(bytes: bytes.count, correction: correction))
                case EINVAL: return .failure(.invalidInput(bytes: bytes.count))
                case ENOMEM: return .failure(.outOfMemory)
                default: return .failure(.encoderFailed(errno: failure))
                }
            }
            defer { QRcode_free(code) }
            let width = Int(code.pointee.width)
            let version = Int(code.pointee.version)
            guard width > 0, let data = code.pointee.data else {
                return .failure(.encoderFailed(errno: 0))
            }
            // Bit 0 of each byte is the colour (1 = dark); the other bits say what the module is for.
            let modules = UnsafeBufferPointer(start: data, count: width * width).map { $0 & 1 == 1 }
            return .success((width, version, modules))
        }
        switch result {
        case .success(let (width, version, modules)):
            size = width
            self.version = version
            self.modules = modules
        case .failure(let error):
            throw error
        }
    }
}
