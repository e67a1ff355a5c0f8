/// ASCII classes for identifiers and hex fields read byte by byte (`Character`'s own also admit
/// fullwidth forms).
extension UInt8 {
    public var isHex: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }

    /// A digit or `a`–`f`: hex as payment hashes, Nostr ids and keys are written.
    public var isLowerHex: Bool {
        (0x30...0x39).contains(self) || (0x61...0x66).contains(self)
    }

    public var isASCIILetterOrDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}

extension String {
    /// Whether every UTF-8 byte satisfies `predicate`, read from the string's own storage when it
    /// has one: stepping through `utf8` cost about 30 instructions a byte (callgrind), and a
    /// webhook checks its token three times.
    @inlinable
    public func allUTF8Bytes(_ predicate: (UInt8) -> Bool) -> Bool {
        utf8.withContiguousStorageIfAvailable { $0.allSatisfy(predicate) } ?? utf8.allSatisfy(predicate)
    }
}
