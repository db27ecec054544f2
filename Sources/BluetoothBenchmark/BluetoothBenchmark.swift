#if canImport(Glibc)
import Glibc
#endif
import Bluetooth

/// Decoded advertising reports per second on one core, over the real captures.
/// usage: swift run -c release BluetoothBenchmark [CAPTURE...] [--runs N]
/// Prints medians of N runs and the ratio against a baseline measured in the same run:
/// copying each event's bytes into a fresh array, the least any decoder must do.
@main enum BluetoothBenchmark {
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return bytes
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static func main() {
        var paths: [String] = []
        var runs = 9
        var arguments = CommandLine.arguments.dropFirst()
        while let a = arguments.popFirst() {
            if a == "--runs", let n = arguments.popFirst().flatMap({ Int($0) }), n > 0 { runs = n } else { paths.append(a) }
        }
        if paths.isEmpty {
            let fixtures = "Tests/BluetoothTests/Fixtures/"
            paths = [fixtures + "csacca_horizon74_btsnoop_hci.log", fixtures + "wangdalian_btsnooper_btsnoop_hci.log"]
        }
        var events: [[UInt8]] = []
        var captures: [[UInt8]] = []
        for path in paths {
            guard let bytes = read(path) else {
                print("cannot read \(path)")
                exit(66)
            }
            captures.append(bytes)
            let parsed = BTSnoopParser.parseAll(bytes)
            guard let datalink = parsed.datalink else { continue }
            for record in parsed.records {
                guard let packet = try? record.packet(datalink: datalink), packet.type == .event,
                    case .advertisingReports = try? HCIEvent(decoding: packet.bytes[...])
                else { continue }
                events.append(packet.bytes)
            }
        }
        // Repeat the events so one run lasts long enough to time (~1 M reports).
        let repeats = max(1, 1_000_000 / max(1, events.count))
        print("captures: \(paths.count), advertising events: \(events.count), repeated \(repeats)x per run, \(runs) runs")

        var baseline: [Double] = []
        var decode: [Double] = []
        var replay: [Double] = []
        var checksum = 0
        for _ in 0..<runs {
            // Baseline: copy each event into a fresh array.
            var t0 = now()
            var copied = 0
            for _ in 0..<repeats {
                for e in events {
                    let copy = Array(e[...])
                    copied &+= Int(copy[copy.count - 1])
                }
            }
            baseline.append(Double(events.count * repeats) / (now() - t0))
            checksum &+= copied

            // Ours: event -> every report -> every beacon.
            t0 = now()
            var reports = 0
            var beacons = 0
            for _ in 0..<repeats {
                for e in events {
                    guard let event = try? HCIEvent(decoding: e[...]), case let .advertisingReports(list) = event else { continue }
                    reports += list.count
                    for r in list { beacons += Beacon.all(in: r.data).count }
                }
            }
            decode.append(Double(reports) / (now() - t0))
            checksum &+= beacons

            // Whole replay path from capture bytes: btsnoop records -> packets -> sightings.
            t0 = now()
            var sightings = 0
            var replayReports = 0
            let replayRepeats = max(1, repeats / 8)
            for _ in 0..<replayRepeats {
                for capture in captures {
                    let parsed = BTSnoopParser.parseAll(capture)
                    guard let datalink = parsed.datalink else { continue }
                    for record in parsed.records {
                        guard let packet = try? record.packet(datalink: datalink), packet.type == .event,
                            let event = try? HCIEvent(decoding: packet.bytes[...])
                        else { continue }
                        if case let .advertisingReports(list) = event { replayReports += list.count }
                        sightings += BeaconSighting.all(in: event, at: 0).count
                    }
                }
            }
            replay.append(Double(replayReports) / (now() - t0))
            checksum &+= sightings
        }
        let b = median(baseline)
        let d = median(decode)
        let r = median(replay)
        func m(_ x: Double) -> String { String(Double(Int(x / 10_000)) / 100) + " M/s" }
        print("baseline  copy event bytes:                   \(m(b)) events (median of \(runs))")
        print("decode    HCI event + reports + beacons:      \(m(d)) reports (median), \(String(Int(1e9 / d))) ns/report, \(String(Double(Int(d / b * 1000)) / 1000))x baseline")
        print("replay    btsnoop + packets + sightings:      \(m(r)) reports (median)")
        print("target    >= 2 M reports/s decode: \(d >= 2_000_000 ? "met" : "MISSED")   (checksum \(checksum % 1000))")
    }
}
