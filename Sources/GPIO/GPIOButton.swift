#if canImport(Glibc)
import Glibc
#endif
import CGPIOButton
import POSIX

/// One GPIO line as a button's input, with edge events on both edges (libgpiod v1 or v2,
/// whichever Debian's libgpiod-dev was at build time: see Sources/CGPIOButton). Its `fd`
/// goes on the event loop; `readEdges()` never blocks. Not Sendable: it belongs to the
/// loop's thread. The line is released when the button goes.
public final class GPIOButton {
    /// The line's pull resistor: a button to ground wants pull-up (and `activeLow`), one to
    /// 3.3 V pull-down; `asIs` leaves it to the board (an external resistor, the device tree).
    public enum Bias: String, Sendable, CaseIterable {
        case pullUp = "pull-up"
        case pullDown = "pull-down"
        case asIs = "as-is"

        var code: Int32 {
            switch self {
            case .pullUp: return Int32(PH_GPIO_BIAS_PULL_UP)
            case .pullDown: return Int32(PH_GPIO_BIAS_PULL_DOWN)
            case .asIs: return Int32(PH_GPIO_BIAS_AS_IS)
            }
        }
    }

    public struct Edge: Sendable, Equatable {
        /// The kernel's timestamp, seconds on CLOCK_MONOTONIC.
        public var time: Double
        /// Became active (pressed); false: became inactive.
        public var active: Bool

        public init(time: Double, active: Bool) {
            self.time = time
            self.active = active
        }
    }

    /// The chip's device path and the line's offset on it.
    public let chipPath: String
    public let line: UInt32
    /// False when the kernel or the chip refused the bias and the line was taken as it was.
    public let biasApplied: Bool
    private let handle: OpaquePointer

    /// Requests the line. Errors: ENOENT no such chip, EINVAL no such line on it, EBUSY
    /// in use, EACCES no permission on the chip's device.
    public init(chip: String, line: UInt32, activeLow: Bool, bias: Bias, consumer: String = "pirate-hunter") throws(SystemError) {
        let path = GPIOButton.devicePath(chip)
        var applied: Int32 = 1
        guard let handle = ph_gpio_button_open(path, line, activeLow ? 1 : 0, bias.code, consumer, &applied) else {
            throw SystemError("open GPIO line \(line) of \(path)", errno: errno, explanation: GPIOButton.explanation(errno, line: line))
        }
        self.handle = handle
        chipPath = path
        self.line = line
        biasApplied = applied != 0
    }

    deinit { ph_gpio_button_close(handle) }

    /// Readable when edges wait (owned by the button: never close it).
    public var fd: Int32 { ph_gpio_button_fd(handle) }

    /// The edges waiting, oldest first; empty when none (never blocks).
    public func readEdges() throws(SystemError) -> [Edge] {
        var out: [Edge] = []
        var buffer = [ph_gpio_edge](repeating: ph_gpio_edge(), count: 16)
        while true {
            let n = try retryingOnInterrupt("read GPIO edges of line \(line) of \(chipPath)") {
                ph_gpio_button_read(handle, &buffer, Int32(buffer.count))
            }
            for edge in buffer.prefix(Int(n)) {
                out.append(Edge(time: Double(edge.timestamp_ns) / 1e9, active: edge.active != 0))
            }
            if n < buffer.count { return out }
        }
    }

    /// Whether the line is active now.
    public func isActive() throws(SystemError) -> Bool {
        try retryingOnInterrupt("read GPIO line \(line) of \(chipPath)") { ph_gpio_button_value(handle) } == 1
    }

    /// Which libgpiod this was built with: "libgpiod 1.6.3 (v1 API)".
    public static var library: String { String(cString: ph_gpio_api()) }

    /// `gpiochip0` -> `/dev/gpiochip0`; a path stays as it is.
    public static func devicePath(_ chip: String) -> String {
        chip.hasPrefix("/") ? chip : "/dev/" + chip
    }

    /// What `check` says of a line, without requesting it.
    public struct LineStatus: Sendable, Equatable {
        /// The chip's label (`pinctrl-bcm2711`, `gpio-sim.0-node0`).
        public var label: String
        public var lines: UInt32
        /// Who holds the line; nil: free.
        public var consumer: String?
    }

    /// The chip's label and line count, and who holds the line. Errors: ENOENT no chip,
    /// ERANGE no such line (the explanation names how many there are).
    public static func status(chip: String, line: UInt32) throws(SystemError) -> LineStatus {
        let path = devicePath(chip)
        var status = ph_gpio_line_status()
        if ph_gpio_line_status_get(path, line, &status) != 0 {
            let code = errno
            let why = code == ERANGE ? "the chip has \(status.lines) lines (0 to \(Int(status.lines) - 1))" : explanation(code, line: line)
            throw SystemError("GPIO line \(line) of \(path)", errno: code, explanation: why)
        }
        let label = text(of: status.label)
        let consumer = text(of: status.consumer)
        return LineStatus(label: label, lines: status.lines, consumer: status.used != 0 ? (consumer.isEmpty ? "the kernel" : consumer) : nil)
    }

    private static func text<T>(of tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    private static func explanation(_ code: Int32, line: UInt32) -> String? {
        switch code {
        case ENOENT: return "no such GPIO chip (gpioinfo lists them)"
        case EINVAL: return "the chip has no line \(line), or refuses it as an input with edge events"
        case EBUSY: return "the line is in use by another program or driver (gpioinfo names it)"
        case EACCES, EPERM: return "no permission on the chip (the gpio group, or the systemd unit's SupplementaryGroups)"
        default: return nil
        }
    }
}
