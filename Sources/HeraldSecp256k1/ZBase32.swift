/// z-base-32, the human-oriented base 32 that Lightning message signatures are written in:
/// five bits a character, most significant first, no padding characters.
public enum ZBase32 {
    static let alphabet: [UInt8] = Array("ybndrfg8ejkmcpqxot1uwisza345h769".utf8)

    /// Each ASCII byte's 5-bit value, or 0xFF where the byte is not in the alphabet.
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    /// Encodes bytes; the last character's unused low bits are zero.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 0x1F)])
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 {
            output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 0x1F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes lower-case z-base-32 into whole bytes. Nil for a character outside the alphabet,
    /// a length no byte string encodes to, or set bits left over past the last whole byte (so
    /// every byte string has exactly one encoding).
    public static func decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        var count = 0
        for character in text.utf8 {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            count += 1
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        // A whole number of bytes takes ceil(8n / 5) characters: the leftover is under 5 bits.
        guard bits < 5, buffer == 0 else { return nil }
        return output
    }
}
