import Bluetooth
import Testing

func complete(_ opcode: HCIOpcode, _ status: HCIStatus = .success, _ extra: [UInt8] = []) -> HCIEvent {
    .commandComplete(opcode: opcode, numberOfPackets: 1, returnParameters: ([status.rawValue] + extra)[...])
}

func supportedReply(extended: Bool) -> HCIEvent {
    var octets = [UInt8](repeating: 0, count: 64)
    if extended {
        octets[37] = 0x60
        octets[36] = 0x2C
    }
    return complete(.readLocalSupportedCommands, .success, octets)
}

extension ControllerProcedure {
    /// Scanning alone, as a hunter that never advertises asks for it.
    static func startScanning(active: Bool, timeout: Double = 2.0) -> ControllerProcedure {
        configure(from: nil, to: ControllerSettings(scanning: active ? .active : .passive), advertises: false, timeout: timeout)
    }
}

/// Drives a procedure against scripted answers; returns the commands sent and the outcome.
func drive(_ procedure: inout ControllerProcedure, answer: (HCICommand) -> HCIEvent?) -> ([HCICommand], ProcedureStep) {
    var sent: [HCICommand] = []
    var step = procedure.start(at: 0)
    var t = 0.0
    while case let .send(command) = step {
        sent.append(command)
        t += 0.01
        guard let reply = answer(command) else {
            step = procedure.tick(at: t + procedure.timeout)
            break
        }
        step = procedure.handle(reply, at: t)
    }
    return (sent, step)
}

@Suite struct ControllerProcedureTests {
    @Test func legacyControllerGetsLegacyScanning() {
        var p = ControllerProcedure.startScanning(active: false)
        let (sent, outcome) = drive(&p) { c in
            c == .readLocalSupportedCommands ? supportedReply(extended: false) : complete(c.opcode)
        }
        #expect(outcome == .finished)
        #expect(p.family == .legacy)
        #expect(sent == [
            .readLocalSupportedCommands,
            .leSetScanEnable(false, filterDuplicates: false),
            .leSetScanParameters(active: false, interval: 0x10, window: 0x10, ownAddress: .public),
            .leSetScanEnable(true, filterDuplicates: false),
        ])
    }

    @Test func extendedBitsChooseExtendedScanning() {
        var p = ControllerProcedure.startScanning(active: true)
        let (sent, outcome) = drive(&p) { c in
            c == .readLocalSupportedCommands ? supportedReply(extended: true) : complete(c.opcode)
        }
        #expect(outcome == .finished)
        #expect(p.family == .extended)
        #expect(sent.last == .leSetExtendedScanEnable(true, filterDuplicates: false))
        #expect(sent.contains(.leSetExtendedScanParameters(active: true, interval: 0x10, window: 0x10, ownAddress: .public)))
    }

    @Test func disablingWhatIsOffIsTolerated() {
        var p = ControllerProcedure.startScanning(active: false)
        let (_, outcome) = drive(&p) { c in
            switch c {
            case .readLocalSupportedCommands: return supportedReply(extended: false)
            case .leSetScanEnable(false, _): return complete(c.opcode, .commandDisallowed)
            default: return complete(c.opcode)
            }
        }
        #expect(outcome == .finished)
    }

    @Test(arguments: [HCIStatus.commandDisallowed, .invalidParameters, .unknownCommand])
    func aRefusedCommandFailsNamingItAndTheStatus(_ status: HCIStatus) {
        var p = ControllerProcedure.startScanning(active: false)
        let (sent, outcome) = drive(&p) { c in
            switch c {
            case .readLocalSupportedCommands: return supportedReply(extended: false)
            case .leSetScanParameters: return complete(c.opcode, status)
            default: return complete(c.opcode)
            }
        }
        #expect(outcome == .failed(CommandFailure(opcode: .leSetScanParameters, status: status)))
        #expect(sent.count == 3)
        if case let .failed(f) = outcome {
            #expect(f.description.hasPrefix("LE Set Scan Parameters (0x200b) failed: "))
        }
    }

    @Test func silenceTimesOut() {
        var p = ControllerProcedure.startScanning(active: false, timeout: 2)
        #expect(p.start(at: 10) == .send(.readLocalSupportedCommands))
        #expect(p.deadline == 12)
        #expect(p.tick(at: 11.9) == .wait)
        #expect(p.tick(at: 12) == .failed(CommandFailure(opcode: .readLocalSupportedCommands, status: nil)))
    }

    @Test func unrelatedEventsAndOtherOpcodesAreIgnored() {
        var p = ControllerProcedure.startScanning(active: false)
        _ = p.start(at: 0)
        #expect(p.handle(.advertisingReports([]), at: 0.1) == .wait)
        #expect(p.handle(complete(.leSetAdvertisingEnable), at: 0.1) == .wait)
        #expect(p.handle(.commandStatus(opcode: .readLocalSupportedCommands, status: .success, numberOfPackets: 1), at: 0.1) == .wait)
        #expect(p.handle(supportedReply(extended: false), at: 0.2) == .send(.leSetScanEnable(false, filterDuplicates: false)))
    }

    @Test func stopScanningIsOneToleratedDisable() {
        var p = ControllerProcedure.stopAll(advertising: false, family: .extended)
        let (sent, outcome) = drive(&p) { c in complete(c.opcode, .commandDisallowed) }
        #expect(sent == [.leSetExtendedScanEnable(false, filterDuplicates: false)])
        #expect(outcome == .finished)
    }
}
