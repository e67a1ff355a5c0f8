import Foundation
import HeraldStore
import HeraldWire
import Testing

@testable import HeraldSQLite

@Suite("The webhook token cache")
struct TokenResolutionCacheTests {
    static let live = WebhookTokenResolution(device: nil, isDead: false)

    /// Looks `token` up and caches the answer a database read would have given.
    static func fill(_ cache: TokenResolutionCache, _ token: String) -> TokenResolutionCache.Key {
        let key = TokenResolutionCache.Key(token: token, rawPlatform: .ios)
        let (cached, generation) = cache.lookup(key)
        #expect(cached == nil)
        cache.store(live, for: key, generation: generation)
        return key
    }

    @Test("4 KiB tokens never take it past its byte bound: it empties instead, and keeps the newest")
    func byteBound() {
        let cache = TokenResolutionCache(capacity: 1_000, maxBytes: 20_000)
        var peak = 0
        for n in 0..<50 {
            let key = Self.fill(cache, "\(n):" + String(repeating: "f", count: 4_096))
            let usage = cache.usage
            #expect(usage.bytes <= 20_000)
            #expect(cache.lookup(key).0 == Self.live)
            peak = max(peak, usage.count)
        }
        // About 4.4 KB an entry (the token and its slot): four fit in 20,000 bytes, far fewer than
        // the 1,000 entries allowed.
        #expect(peak == 4)
    }

    @Test("short tokens fill it up to its entry cap")
    func entryCap() {
        let cache = TokenResolutionCache(capacity: 100, maxBytes: 1 << 20)
        let keys = (0..<100).map { Self.fill(cache, "alias-\($0)") }
        #expect(cache.usage.count == 100)
        #expect(keys.allSatisfy { cache.lookup($0).0 != nil })
        _ = Self.fill(cache, "one-more")
        #expect(cache.usage.count == 1)
    }

    @Test("an answer bigger than the whole bound is not kept")
    func oversized() {
        let cache = TokenResolutionCache(capacity: 100, maxBytes: 1_000)
        let small = Self.fill(cache, "small")
        let huge = Self.fill(cache, String(repeating: "h", count: 2_000))
        #expect(cache.lookup(huge).0 == nil)
        #expect(cache.lookup(small).0 == Self.live)
        cache.invalidate()
        #expect(cache.usage.count == 0 && cache.usage.bytes == 0)
    }
}
