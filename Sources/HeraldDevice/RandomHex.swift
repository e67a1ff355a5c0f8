import HeraldWire

/// `count` random bytes from the system's secure generator.
func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
}

/// `bytes` random bytes from the system's secure generator, as lowercase hex.
func randomHex(bytes: Int) -> String {
    randomBytes(bytes).lowercaseHex
}
