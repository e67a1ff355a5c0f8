import HeraldWire
import Synchronization

/// Which tokens may be in `dead_token`: a Bloom filter, so a webhook for a raw token that was
/// never marked dead (nearly all of them) is answered without reading the file.
///
/// Why: a raw APNs or FCM token the cache has not seen cost a read on the reader thread, and
/// that thread's wake-up and the hop back were two of a webhook's ~15 context switches at
/// 100/s. The filter never forgets a token it was told of, so "not in the filter"
/// means "not dead"; "maybe" falls back to the read.
///
/// Correct because one process owns the file and `dead_token` only grows: the store fills the
/// filter from the table when it opens and adds each token before the transaction that marks
/// it commits (a rolled-back mark leaves a false "maybe", which only costs a read).
final class DeadTokenFilter: Sendable {
    private let words: Mutex<[UInt64]>
    private let mask: Int

    /// - Parameter bits: The filter's size, a power of two. The default (2²⁰ bits, 128 KiB) keeps
    ///   false positives near 1% for 100,000 dead tokens; past that they grow, and cost reads only.
    init(bits: Int = 1 << 20) {
        precondition(bits >= 64 && bits & (bits - 1) == 0, "a power of two")
        words = Mutex([UInt64](repeating: 0, count: bits / 64))
        mask = bits - 1
    }

    func insert(platform: Platform, token: String) {
        let (a, b) = hashes(platform: platform, token: token)
        words.withLock { words in
            for i in 0..<Self.probes {
                let bit = (a &+ i &* b) & mask
                words[bit >> 6] |= 1 << UInt64(bit & 63)
            }
        }
    }

    /// False only for a token never inserted.
    func mightContain(platform: Platform, token: String) -> Bool {
        let (a, b) = hashes(platform: platform, token: token)
        return words.withLock { words in
            for i in 0..<Self.probes {
                let bit = (a &+ i &* b) & mask
                if words[bit >> 6] & (1 << UInt64(bit & 63)) == 0 { return false }
            }
            return true
        }
    }

    private static let probes = 4

    /// Two hashes, from which the probes' bits are drawn (Kirsch–Mitzenmacher). `Hasher` is
    /// seeded per process, which suits a filter that lives in memory only.
    private func hashes(platform: Platform, token: String) -> (Int, Int) {
        var first = Hasher()
        first.combine(platform.rawValue)
        first.combine(token)
        var second = Hasher()
        second.combine(token)
        second.combine(platform.rawValue)
        second.combine(0x5EED)
        return (first.finalize(), second.finalize() | 1)
    }
}
