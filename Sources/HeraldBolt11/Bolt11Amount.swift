/// The amount in an invoice's human-readable part: a decimal number of bitcoin, scaled by an
/// optional multiplier letter (`m` 10⁻³, `u` 10⁻⁶, `n` 10⁻⁹, `p` 10⁻¹²).
///
/// One millisatoshi is 10 pico-bitcoin, so every msat amount has an exact form; the writer uses
/// the largest multiplier that keeps the number whole, as BOLT11 asks.
public enum Bolt11Amount {
    /// Millisatoshis per unit of each multiplier, largest first; the empty letter is one bitcoin.
    static let units: [(letter: String, msat: UInt64)] = [
        ("", 100_000_000_000), ("m", 100_000_000), ("u", 100_000), ("n", 100),
    ]

    /// The shortest text for `msat`: `2500u`, `20m`, `9678785340p`; nil for zero, which BOLT11
    /// cannot write (an invoice for any amount leaves the amount out instead).
    public static func text(msat: UInt64) -> String? {
        guard msat > 0 else { return nil }
        for unit in units where msat.isMultiple(of: unit.msat) {
            return String(msat / unit.msat) + unit.letter
        }
        // Pico-bitcoin: ten per millisatoshi, written with the trailing 0 BOLT11 requires.
        return String(msat) + "0p"
    }

    /// The millisatoshis `text` stands for; nil for anything but digits without a leading zero
    /// and an optional known multiplier, a `p` amount not ending in 0, zero, or an overflow.
    public static func msat(text: some StringProtocol) -> UInt64? {
        var digits = Substring(text)
        let multiplier = digits.last.flatMap { $0.isNumber ? nil : $0 }
        if multiplier != nil { digits = digits.dropLast() }
        guard !digits.isEmpty, digits.first != "0", digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let number = UInt64(digits), number > 0
        else { return nil }
        switch multiplier {
        case "p"?:
            guard number.isMultiple(of: 10) else { return nil }
            return number / 10
        case let letter?:
            guard let unit = units.first(where: { $0.letter == String(letter) }) else { return nil }
            let (value, overflow) = number.multipliedReportingOverflow(by: unit.msat)
            return overflow ? nil : value
        case nil:
            let (value, overflow) = number.multipliedReportingOverflow(by: units[0].msat)
            return overflow ? nil : value
        }
    }
}
