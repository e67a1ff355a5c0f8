import Foundation

/// A small seeded generator (Steele, Lea and Flood's SplitMix64): the fleet simulation must give
/// the same phones the same luck on every run, so a change in the table is a change in Herald.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// A generator for one stream of draws (`payment`, `purpose`) under `seed`, independent of
    /// the order in which concurrent tasks ask for them.
    init(seed: UInt64, payment: Int, purpose: UInt64) {
        var mixer = SplitMix64(seed: seed ^ (UInt64(payment) &* 0x9E37_79B9_7F4A_7C15) ^ (purpose &* 0xD1B5_4A32_D192_ED03))
        state = mixer.next()
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

    mutating func chance(_ probability: Double) -> Bool { unit() < probability }

    mutating func uniform(_ range: ClosedRange<Double>) -> Double { range.lowerBound + unit() * (range.upperBound - range.lowerBound) }

    /// Log-normal with the given median and σ of the underlying normal (Box–Muller).
    mutating func logNormal(median: Double, sigma: Double) -> Double {
        let u1 = max(unit(), 0x1p-53)
        let normal = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * unit())
        return median * exp(sigma * normal)
    }
}
