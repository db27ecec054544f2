import GPIO
import Testing

@testable import PirateHunter

/// `button`: a GPIO line whose presses say the clue again; absent, no button.
@Suite struct ButtonConfigurationTests {
    static func decode(_ json: String) throws(CLIError) -> HunterConfiguration {
        try HunterConfiguration.decode(Array(json.utf8), file: "hunter.json")
    }

    static func message(_ json: String) -> String? {
        do {
            _ = try decode(json)
            return nil
        } catch {
            #expect(error.code == .config, "a configuration error exits 78")
            return error.message
        }
    }

    @Test func absentMeansNoButton() throws {
        #expect(try Self.decode("{}").button == nil)
        #expect(try Self.decode(#"{"button": null}"#).button == nil)
        #expect(try Self.decode("{}").hunterSetup().button == nil)
    }

    @Test func aButtonToGroundIsActiveLowWithAPullUp() throws {
        let configuration = try Self.decode(#"{"button": {"chip": "gpiochip0", "line": 17}}"#)
        let button = try #require(configuration.button)
        #expect(button.chip == "gpiochip0" && button.line == 17 && button.activeLow)
        #expect(button.resolvedBias == .pullUp)
        #expect(configuration.hunterSetup().button == button)
        #expect(configuration.hunterSetup(quiet: true).button == nil, "no voice, nothing to say again")
        #expect(GPIOButton.devicePath(button.chip) == "/dev/gpiochip0")
    }

    @Test func activeHighPullsDownUnlessTold() throws {
        let high = try #require(try Self.decode(#"{"button": {"chip": "/dev/gpiochip4", "line": 3, "active_low": false}}"#).button)
        #expect(high.resolvedBias == .pullDown)
        #expect(GPIOButton.devicePath(high.chip) == "/dev/gpiochip4")
        let asIs = try #require(try Self.decode(#"{"button": {"chip": "gpiochip1", "line": 0, "bias": "as-is"}}"#).button)
        #expect(asIs.resolvedBias == .asIs)
    }

    @Test(arguments: [
        (#"{"button": {"line": 17}}"#,
         "hunter.json: button.chip: is missing; allowed: a GPIO chip: gpiochipN (as /dev/gpiochipN; gpioinfo lists them) or its /dev path"),
        (#"{"button": {"chip": "gpiochip0"}}"#,
         "hunter.json: button.line: is missing; allowed: an integer, 0 to 1023 (the line's offset on the chip)"),
        (#"{"button": {"chip": "gpiochip0", "line": 2000}}"#,
         "hunter.json: button.line: 2000 is out of range; allowed: an integer, 0 to 1023"),
        (#"{"button": {"chip": "gpiochip0", "line": -1}}"#,
         "hunter.json: button.line: -1 is out of range; allowed: an integer, 0 to 1023"),
        (#"{"button": {"chip": "GPIO17", "line": 17}}"#,
         "hunter.json: button.chip: 'GPIO17' is not a GPIO chip's name; allowed: a GPIO chip: gpiochipN (as /dev/gpiochipN; gpioinfo lists them) or its /dev path"),
        (#"{"button": {"chip": "/tmp/chip", "line": 1}}"#,
         "hunter.json: button.chip: '/tmp/chip' is not under /dev; allowed: a GPIO chip: gpiochipN (as /dev/gpiochipN; gpioinfo lists them) or its /dev path"),
        (#"{"button": {"chip": "gpiochip0", "line": 17, "bias": "up"}}"#,
         "hunter.json: button.bias: 'up' is not one of them; allowed: pull-up, pull-down, as-is (default: pull-up when active_low, else pull-down)"),
        (#"{"button": {"chip": "gpiochip0", "line": 17, "active_low": "yes"}}"#,
         "hunter.json: button.active_low: must be true or false; allowed: true, false"),
        (#"{"button": {"chip": "gpiochip0", "pin": 17}}"#,
         "hunter.json: button.pin: unknown key; allowed: chip, line, active_low, bias"),
        (#"{"button": 17}"#,
         "hunter.json: button: must be a JSON object; allowed: an object with keys chip, line, active_low, bias"),
    ])
    func badValuesAreOneClearLine(_ json: String, _ expected: String) {
        #expect(Self.message(json) == expected)
    }

    // MARK: check

    static func facts(_ status: Result<CheckFacts.GPIOLineStatus, CheckFacts.GPIOProblem>) -> CheckFacts.Button {
        CheckFacts.Button(chip: "/dev/gpiochip0", line: 17, status: status)
    }

    @Test func checkSaysAFreeLineIsReady() {
        let lines = Checklist.button(Self.facts(.success(.init(label: "pinctrl-bcm2711", lines: 58, consumer: nil))))
        #expect(lines == [.ok(.configuration, "button", "line 17 of /dev/gpiochip0 (pinctrl-bcm2711, 58 lines): free")])
        #expect(Checklist.button(Self.facts(.success(.init(label: "x", lines: 58, consumer: "pirate-hunter")))).first?.status == .ok)
    }

    @Test func checkWarnsOfAMissingChipOrALineInUse() {
        let missing = Checklist.button(Self.facts(.failure(.init(missingChip: true, message: "open: no such GPIO chip"))))
        #expect(missing.map(\.status) == [.warn])
        #expect(missing.first?.detail == "no GPIO chip /dev/gpiochip0: the hunt goes on without the button")
        let used = Checklist.button(Self.facts(.success(.init(label: "pinctrl-bcm2711", lines: 58, consumer: "onewire"))))
        #expect(used.map(\.status) == [.warn])
        #expect(used.first?.detail.hasSuffix("in use by onewire: the hunter cannot have it") == true)
        #expect(Checklist.button(nil).isEmpty, "no button configured: no line")
    }

    @Test func theProbeOfAChipThatIsNotThereIsAMissingChip() {
        let facts = CheckProbe.button(HunterConfiguration.Button(chip: "gpiochip987", line: 1))
        guard case let .failure(problem) = facts.status else {
            Issue.record("a chip that is not there read as \(facts.status)")
            return
        }
        #expect(problem.missingChip)
        #expect(facts.chip == "/dev/gpiochip987")
    }

    @Test func aButtonThatCannotBeOpenedNamesTheChipAndWhy() {
        do {
            _ = try GPIOButton(chip: "gpiochip987", line: 17, activeLow: true, bias: .pullUp)
            Issue.record("opened a chip that is not there")
        } catch {
            #expect("\(error)" == "open GPIO line 17 of /dev/gpiochip987: no such GPIO chip (gpioinfo lists them)")
        }
        #expect(GPIOButton.library.hasPrefix("libgpiod "))
    }
}
