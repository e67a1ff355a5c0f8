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
        let milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(index))) }
        bytes[6] = 0x70 | UInt8(truncatingIfNeeded: high & 0x0F)  // version 7
        bytes[7] = UInt8(truncatingIfNeeded: high >> 8)
        bytes[8] = 0x80 | UInt8(truncatingIfNeeded: low & 0x3F)  // variant 10
        for index in 9..<16 { bytes[index] = UInt8(truncatingIfNeeded: low >> (8 * UInt64(index - 8))) }
        let uuid = UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        ))
        return uuid.uuidString.lowercased()
    }
}
