import HeraldWire

/// Making and keeping a node's own key: a development wallet signs its invoices with a key it
/// generated once and kept in its folder.
extension NodeSecretKey {
    /// A fresh key from the system's secure generator.
    public static func random() -> NodeSecretKey {
        var generator = SystemRandomNumberGenerator()
        while true {
            // Every 32-byte string but zero and those at or above the curve order is a key;
            // a retry is needed about once in 2^128 draws.
            let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            if let key = NodeSecretKey(bytes: bytes) { return key }
        }
    }

    /// The key as 64 lower-case hex digits, to store where only its owner can read it; the
    /// inverse of ``init(hex:)``. Never log it (``description`` shows the node id instead).
    public var secretHex: String { bytes.lowercaseHex }
}
