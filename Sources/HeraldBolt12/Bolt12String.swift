import HeraldBech32

/// BOLT 12's text form: a human-readable prefix, `1`, then the bytes as bech32 characters with
/// no checksum, which may be split by `+` and whitespace.
enum Bolt12String {
    // HeraldBech32 keeps its character table to itself; the alphabet is fixed by BIP-173.
    static let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = Int8(index) }
        return table
    }()

    static func isWhitespace(_ byte: UInt8) -> Bool {
        // Space, tab, line feed, vertical tab, form feed, carriage return.
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    /// `text` with every `+` and the whitespace after it removed, in lower case. A `+` must sit
    /// between two characters, and whitespace anywhere else is refused: a reader only joins
    /// continuations, it does not guess at stray spaces.
    static func normalize(_ text: String) throws(Bolt12OfferError) -> String {
        let input = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "+") {
                guard !output.isEmpty else { throw Bolt12OfferError(.badContinuation, "'+' at the start") }
                index += 1
                while index < input.count, isWhitespace(input[index]) { index += 1 }
                guard index < input.count else { throw Bolt12OfferError(.badContinuation, "'+' at the end") }
                guard input[index] != UInt8(ascii: "+") else {
                    throw Bolt12OfferError(.badContinuation, "'+' followed by another '+'")
                }
                continue
            }
            guard !isWhitespace(byte) else { throw Bolt12OfferError(.badContinuation, "whitespace not after a '+'") }
            output.append(byte)
            index += 1
        }
        let hasLower = output.contains { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
        let hasUpper = output.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
        guard !(hasLower && hasUpper) else { throw Bolt12OfferError(.mixedCase, "upper- and lower-case letters together") }
        return String(decoding: output, as: UTF8.self).lowercased()
    }

    /// The bytes of `normalized` (lower case, continuations joined) after `hrp` and `1`.
    static func bytes(_ normalized: String, hrp: String) throws(Bolt12OfferError) -> [UInt8] {
        let prefix = Array((hrp + "1").utf8)
        let text = Array(normalized.utf8)
        guard text.starts(with: prefix) else { throw Bolt12OfferError(.notAnOffer, "does not start with \(hrp)1") }
        var groups: [UInt8] = []
        groups.reserveCapacity(text.count - prefix.count)
        for character in text[prefix.count...] {
            guard character < 128, values[Int(character)] >= 0 else {
                throw Bolt12OfferError(.invalidCharacter, "a character outside bech32's alphabet after \(hrp)1")
            }
            groups.append(UInt8(values[Int(character)]))
        }
        // BIP-173's rule for reading 5-bit groups back as bytes: what is left after the last
        // whole byte is the writer's zero padding, so fewer than 5 bits (else a whole group was
        // added for nothing) and all zero (else two strings would carry the same bytes).
        let leftover = groups.count * 5 % 8
        guard leftover < 5 else {
            throw Bolt12OfferError(.invalidPadding, "\(leftover) bits of padding after the last byte, at most 4 allowed")
        }
        if let last = groups.last, last & UInt8((1 << leftover) - 1) != 0 {
            throw Bolt12OfferError(.invalidPadding, "padding bits after the last byte are not zero")
        }
        return Bech32.regroup(groups, from: 5, to: 8, pad: false)
    }

    /// `hrp`, `1` and `bytes` as bech32 characters, lower case, in one piece.
    static func encode(hrp: String, bytes: [UInt8]) -> String {
        let groups = Bech32.regroup(bytes, from: 8, to: 5, pad: true)
        return hrp + "1" + String(decoding: groups.map { alphabet[Int($0)] }, as: UTF8.self)
    }
}
