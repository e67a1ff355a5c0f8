/// Bech32 (BIP-173) as BOLT11 invoices, LNURLs and `nsec` keys use it: the original checksum
/// constant (not bech32m), and no 90-character limit, since invoices are longer. A module of its
/// own so Nostr's keys and LNURLs read it without linking BOLT11.
public enum Bech32 {
    static let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = Int8(index) }
        return table
    }()

    /// Why a string is not bech32.
    public enum DecodingError: Error, Hashable {
        case mixedCase
        case noSeparator
        case invalidCharacter
        case tooShort
        case badChecksum
    }

    /// `hrp`, the separator `1`, `data` (5-bit groups) and the checksum, in lower case.
    public static func encode(hrp: String, data: [UInt8]) -> String {
        let hrp = hrp.lowercased()
        let checksum = self.checksum(hrp: Array(hrp.utf8), data: data)
        return hrp + "1" + String(decoding: (data + checksum).map { alphabet[Int($0)] }, as: UTF8.self)
    }

    /// The human-readable part and the 5-bit groups before the checksum; either case is read,
    /// never both mixed.
    public static func decode(_ text: String) throws(DecodingError) -> (hrp: String, data: [UInt8]) {
        let bytes = Array(text.utf8)
        let hasLower = bytes.contains { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
        let hasUpper = bytes.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
        guard !(hasLower && hasUpper) else { throw .mixedCase }
        let lowered = Array(text.lowercased().utf8)
        guard let separator = lowered.lastIndex(of: UInt8(ascii: "1")), separator > 0 else { throw .noSeparator }
        let hrp = Array(lowered[..<separator])
        guard hrp.allSatisfy({ (33...126).contains($0) }) else { throw .invalidCharacter }
        var data: [UInt8] = []
        data.reserveCapacity(lowered.count - separator - 1)
        for character in lowered[(separator + 1)...] {
            guard character < 128, values[Int(character)] >= 0 else { throw .invalidCharacter }
            data.append(UInt8(values[Int(character)]))
        }
        guard data.count >= 6 else { throw .tooShort }
        guard polymod(expand(hrp) + data) == 1 else { throw .badChecksum }
        return (String(decoding: hrp, as: UTF8.self), Array(data.dropLast(6)))
    }

    /// Regroups bits: 8 to 5 for writing bytes as bech32 groups, 5 to 8 for reading them back.
    /// With `pad`, a last partial group is filled with zero bits; without, leftover bits are dropped.
    public static func regroup(_ input: some Sequence<UInt8>, from: Int, to: Int, pad: Bool) -> [UInt8] {
        var accumulator = 0
        var bits = 0
        var output: [UInt8] = []
        let mask = (1 << to) - 1
        for value in input {
            accumulator = (accumulator << from) | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                output.append(UInt8((accumulator >> bits) & mask))
            }
            accumulator &= (1 << bits) - 1
        }
        if pad, bits > 0 { output.append(UInt8((accumulator << (to - bits)) & mask)) }
        return output
    }

    static func checksum(hrp: [UInt8], data: [UInt8]) -> [UInt8] {
        let value = polymod(expand(hrp) + data + [0, 0, 0, 0, 0, 0]) ^ 1
        return (0..<6).map { UInt8((value >> (5 * (5 - $0))) & 31) }
    }

    static func expand(_ hrp: [UInt8]) -> [UInt8] {
        hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
    }

    static func polymod(_ values: [UInt8]) -> UInt32 {
        let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]
        var check: UInt32 = 1
        for value in values {
            let top = check >> 25
            check = (check & 0x1ff_ffff) << 5 ^ UInt32(value)
            for index in 0..<5 where (top >> index) & 1 == 1 { check ^= generator[index] }
        }
        return check
    }
}
