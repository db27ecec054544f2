// swift-tools-version: 6.0
import PackageDescription

// Warnings are errors, spelled so that Swift 6.0 (Debian 13's swiftlang) takes it too:
// `.treatAllWarnings(as: .error)` needs tools version 6.2.
let strict: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]

let package = Package(
    name: "PirateHunter",
    products: [
        .executable(name: "pirate-hunter", targets: ["PirateHunter"]),
    ],
    targets: [
        // C headers, each in its own system-library module.
        .systemLibrary(name: "CBlueZ", path: "Sources/CBlueZ"),
        .systemLibrary(name: "CALSA", path: "Sources/CALSA", pkgConfig: "alsa"),
        .systemLibrary(name: "CEspeakNG", path: "Sources/CEspeakNG", pkgConfig: "espeak-ng"),
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(name: "CQREncode", path: "Sources/CQREncode", pkgConfig: "libqrencode"),
        .systemLibrary(name: "CGPIOD", path: "Sources/CGPIOD", pkgConfig: "libgpiod"),
        .systemLibrary(name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium"),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd"),
        // libgpiod's v1 API (Debian 12) or v2 API (Debian 13, Raspberry Pi OS) behind one tiny
        // C API, picked when compiled.
        .target(name: "CGPIOButton", dependencies: ["CGPIOD"], cSettings: [.unsafeFlags(["-Wall", "-Wextra", "-Werror"])]),

        // Pure core: no I/O, no clock, no C.
        .target(name: "Bluetooth", swiftSettings: strict),
        .target(name: "Ranging", swiftSettings: strict),
        // What to say when: ranging events in, lines and sounds out (pure).
        .target(name: "Hunt", dependencies: ["Ranging"], swiftSettings: strict),
        // The world the radio sees: path loss, noise, channels, loss bursts (seeded, pure).
        .target(name: "Simulation", swiftSettings: strict),
        // The treasure box's terminal screen and its log lines (pure: frames are strings).
        .target(name: "Kiosk", dependencies: ["Ranging"], swiftSettings: strict),
        // The game's rules in one room: HunterCore and TreasureBoxCore (inputs in, effects
        // out), the one sighting-to-ranging path, the typed --json output (pure).
        .target(name: "Game", dependencies: ["Bluetooth", "Ranging", "Hunt", "Kiosk"], swiftSettings: strict),

        // Edges.
        // The one OS layer below them: errno errors, the EINTR funnel, fds, safe files.
        .target(name: "POSIX", swiftSettings: strict),
        .target(name: "Radio", dependencies: ["Bluetooth", "POSIX", "CLinux", "CBlueZ"], swiftSettings: strict),
        .target(name: "Audio", dependencies: ["POSIX", "CALSA"], swiftSettings: strict),
        .target(name: "Voice", dependencies: ["CEspeakNG", "POSIX", "Audio", "Hunt"], swiftSettings: strict),
        // The treasure box reward as a QR code: libqrencode, rendered as half blocks, ASCII, SVG.
        .target(name: "QRCode", dependencies: ["CQREncode"], swiftSettings: strict),
        // A push button on a GPIO line (libgpiod) and its debouncer (pure, fed timestamps).
        .target(name: "GPIO", dependencies: ["CGPIOButton", "POSIX"], swiftSettings: strict),
        // The game key (issue #25): libsodium's MACs, KDF and stream cipher behind the pure
        // core's `SignalAuthenticator`; the key's text and fingerprint.
        .target(name: "GameKey", dependencies: ["Bluetooth", "CSodium"], swiftSettings: strict),
        // The parent's phone page (issue #26): its gate (setup code, sessions, CSRF, Host and
        // Origin), its pages as HTML, the tags in view (pure: requests in, responses out).
        .target(name: "ParentPage", dependencies: ["Bluetooth", "Ranging", "Game"], swiftSettings: strict),
        // Its HTTP server: libmicrohttpd on the event loop's terms (one epoll fd, no thread).
        .target(name: "Web", dependencies: ["ParentPage", "POSIX", "CMicroHTTPD"], swiftSettings: strict),

        .executableTarget(
            name: "PirateHunter",
            dependencies: ["Bluetooth", "POSIX", "Radio", "Ranging", "Hunt", "Game", "Simulation", "Voice", "Audio", "Kiosk", "QRCode", "GPIO", "GameKey", "ParentPage", "Web"],
            swiftSettings: strict
        ),

        // libFuzzer entry point (built with --sanitize fuzzer, see README).
        .executableTarget(
            name: "FuzzBluetooth", dependencies: ["Bluetooth"],
            swiftSettings: strict),
        // Release-build benchmarks: swift run -c release <Name>Benchmark
        .executableTarget(name: "BluetoothBenchmark", dependencies: ["Bluetooth"], swiftSettings: strict),
        .executableTarget(
            name: "RangingBenchmark", dependencies: ["Ranging", "Simulation", "Hunt", "Bluetooth"], swiftSettings: strict),
        .executableTarget(name: "HuntBenchmark", dependencies: ["Hunt", "Simulation", "Game", "Bluetooth", "Ranging"], swiftSettings: strict),
        .executableTarget(name: "VoiceBenchmark", dependencies: ["Voice", "Audio", "Hunt"], swiftSettings: strict),

        // What the test targets share: scratch directories, the repository's paths, running a
        // program (a plain library under Tests/, never depending on the PirateHunter executable).
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(
            name: "BluetoothTests", dependencies: ["Bluetooth"],
            resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(name: "ParentPageTests", dependencies: ["TestSupport", "ParentPage", "Web", "Bluetooth", "Ranging"], swiftSettings: strict),
        .testTarget(name: "POSIXTests", dependencies: ["TestSupport", "POSIX", "CLinux"], swiftSettings: strict),
        .testTarget(name: "RadioTests", dependencies: ["TestSupport", "Radio", "POSIX", "Bluetooth"], swiftSettings: strict),
        .testTarget(name: "RangingTests", dependencies: ["Ranging", "Simulation"], swiftSettings: strict),
        .testTarget(
            name: "PirateHunterTests", dependencies: ["TestSupport", "PirateHunter", "Bluetooth", "Radio", "QRCode", "Audio", "GPIO", "GameKey"], swiftSettings: strict),
        .testTarget(name: "HuntTests", dependencies: ["Hunt", "Ranging", "Simulation"], swiftSettings: strict),
        .testTarget(name: "GameTests", dependencies: ["Game", "Hunt", "Ranging", "Bluetooth", "Kiosk"], swiftSettings: strict),
        // Fixtures/frames: the pinned kiosk frames (PIN_FRAMES=1 re-pins, docs/kiosk.md).
        .testTarget(
            name: "KioskTests", dependencies: ["Kiosk", "Ranging"],
            resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(name: "AudioTests", dependencies: ["TestSupport", "Audio"], swiftSettings: strict),
        .testTarget(name: "VoiceTests", dependencies: ["TestSupport", "Voice", "Audio", "Hunt", "Simulation"], swiftSettings: strict),
        .testTarget(name: "QRCodeTests", dependencies: ["TestSupport", "QRCode"], swiftSettings: strict),
        .testTarget(name: "GPIOTests", dependencies: ["GPIO"], swiftSettings: strict),
        .testTarget(name: "GameKeyTests", dependencies: ["GameKey", "Bluetooth"], swiftSettings: strict),
    ]
)
