import QRCode
import Testing

@Suite struct ErrorTests {
    @Test func emptyTextIsAnError() {
        #expect(throws: QRCodeError.emptyText) { try QRCode(encoding: "") }
        #expect(QRCodeError.emptyText.description == "QR code text is empty")
    }

    @Test func tooLongForVersion40IsAnError() {
        let text = String(repeating: "X", count: 3000)
        #expect(throws: QRCodeError.tooLong(bytes: 3000, correction: .medium)) { try QRCode(encoding: text) }
        #expect(
            QRCodeError.tooLong(bytes: 3000, correction: .medium).description
                == "QR code text is 3000 bytes, too long for a QR code at error correction M (at most 2331 bytes)")
    }

    /// libqrencode decides what fits; the capacities quoted in the message must agree with it.
    @Test(arguments: ErrorCorrection.allCases)
    func capacityIsExactlyWhatLibqrencodeFitsInVersion40(correction: ErrorCorrection) throws {
        // Lowercase and punctuation keep it in 8-bit mode whatever the encoder would pick.
        let fits = String(repeating: "a~", count: correction.maximumBytes / 2 + 1).prefix(correction.maximumBytes)
        let code = try QRCode(encoding: String(fits), correction: correction)
        #expect(code.version == 40 && code.size == 177)
        let over = String(fits) + "!"
        #expect(throws: QRCodeError.tooLong(bytes: correction.maximumBytes + 1, correction: correction)) {
            try QRCode(encoding: over, correction: correction)
        }
    }

    @Test func multiByteCharactersCountAsTheirUTF8Bytes() {
        // 800 skulls are 2400 bytes: over M's 2331 though only 800 characters.
        let skulls = String(repeating: "\u{2620}", count: 800)
        #expect(throws: QRCodeError.tooLong(bytes: 2400, correction: .medium)) { try QRCode(encoding: skulls) }
    }
}
