/// BOLT 1's TLV stream: BigSize types and lengths, minimally encoded, types strictly increasing.
enum TLVStream {
    /// Reads `bytes` as records; checks only what every TLV stream must satisfy (encoding, order,
    /// lengths within the data). `checkType` runs on each type as soon as it is read, before its
    /// length, so a record that could never be accepted is refused for its type.
    static func records(
        _ bytes: [UInt8],
        checkType: (UInt64) throws(Bolt12OfferError) -> Void
    ) throws(Bolt12OfferError) -> [Bolt12Offer.Record] {
        var records: [Bolt12Offer.Record] = []
        var index = 0
        var previous: UInt64?
        while index < bytes.count {
            let type = try bigSize(bytes, &index, what: "type")
            if let previous, type <= previous {
                throw Bolt12OfferError(.outOfOrder, "type \(type) after type \(previous)", type: type)
            }
            previous = type
            try checkType(type)
            let length = try bigSize(bytes, &index, what: "length of type \(type)")
            guard length <= UInt64(bytes.count - index) else {
                throw Bolt12OfferError(.truncated, "type \(type) claims \(length) bytes, \(bytes.count - index) remain", type: type)
            }
            let end = index + Int(length)
            records.append(Bolt12Offer.Record(type: type, value: Array(bytes[index..<end])))
            index = end
        }
        return records
    }

    /// A BigSize at `index`, which it moves past it.
    static func bigSize(_ bytes: [UInt8], _ index: inout Int, what: String) throws(Bolt12OfferError) -> UInt64 {
        guard index < bytes.count else { throw Bolt12OfferError(.truncated, "the data ends before the \(what)") }
        let first = bytes[index]
        let (width, minimum): (Int, UInt64) =
            switch first {
            case 0xFF: (8, 0x1_0000_0000)
            case 0xFE: (4, 0x1_0000)
            case 0xFD: (2, 0xFD)
            default: (0, 0)
            }
        guard width > 0 else {
            index += 1
            return UInt64(first)
        }
        guard bytes.count - index - 1 >= width else { throw Bolt12OfferError(.truncated, "the data ends inside the \(what)") }
        let value = bytes[(index + 1)..<(index + 1 + width)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard value >= minimum else {
            throw Bolt12OfferError(.nonMinimalEncoding, "the \(what) (\(value)) is written in \(width + 1) bytes, it fits in fewer")
        }
        index += 1 + width
        return value
    }

    /// The BigSize encoding of `value`, in as few bytes as it takes.
    static func bigSize(_ value: UInt64) -> [UInt8] {
        func bigEndian(_ value: UInt64, _ width: Int) -> [UInt8] {
            (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - $0))) }
        }
        switch value {
        case ..<0xFD: return [UInt8(value)]
        case ..<0x1_0000: return [0xFD] + bigEndian(value, 2)
        case ..<0x1_0000_0000: return [0xFE] + bigEndian(value, 4)
        default: return [0xFF] + bigEndian(value, 8)
        }
    }

    static func encode(_ records: [Bolt12Offer.Record]) -> [UInt8] {
        var bytes: [UInt8] = []
        for record in records {
            bytes += bigSize(record.type)
            bytes += bigSize(UInt64(record.value.count))
            bytes += record.value
        }
        return bytes
    }
}
