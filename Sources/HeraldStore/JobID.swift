import Foundation

/// Job ids: UUIDs of version 7 (RFC 9562), whose first 48 bits are the Unix time in
/// milliseconds.
///
/// Time-ordered on purpose: a random (version 4) id lands each new job on a random page of the
/// primary-key index, so a batch of 100 webhooks dirtied about 100 index pages, each written
/// whole to the WAL and checkpointed later. Ids that grow with time append to the same page.
public enum JobID {
    public static func make(now: Date = Date()) -> String {
        var generator = SystemRandomNumberGenerator()
        let milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000)) & 0xFFFF_FFFF_FFFF
        // The two halves as big-endian words: time, version 7 and 12 random bits; then the
        // variant (binary 10) and 62 random bits.
        let high = milliseconds << 16 | 0x7000 | (generator.next() as UInt64) & 0x0FFF
        let low = 0x8000_0000_0000_0000 | (generator.next() as UInt64) >> 2
        // Written straight into the string: going through `UUID.uuidString` and `lowercased()`
        // cost three allocations per job.
        return String(unsafeUninitializedCapacity: 36) { out in
            var position = 0
            for digit in 0..<32 {
                if digit == 8 || digit == 12 || digit == 16 || digit == 20 {
                    out[position] = UInt8(ascii: "-")
                    position += 1
                }
                let word = digit < 16 ? high : low
                let nibble = Int(truncatingIfNeeded: word >> (60 - 4 * UInt64(digit % 16))) & 0xF
                out[position] = nibble < 10 ? UInt8(ascii: "0") + UInt8(nibble) : UInt8(ascii: "a") + UInt8(nibble - 10)
                position += 1
            }
            return position
        }
    }
}
