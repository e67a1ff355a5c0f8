import HeraldNostr
import Testing

@Suite("NIP-47's kinds and the filters that watch for requests")
struct NwcFilterTests {
    @Test("the kinds are NIP-47's numbers")
    func kinds() {
        #expect(NwcKind.info == 13194)
        #expect(NwcKind.request == 23194)
        #expect(NwcKind.response == 23195)
    }

    @Test("a request filter names the request kind, every wallet service key in order, and since")
    func requestFilter() {
        let first = String(repeating: "ab", count: 32)
        let second = String(repeating: "cd", count: 32)
        #expect(
            NwcFilter.requests(to: [first, second], since: 1_700_000_000)
                == ##"{"kinds":[23194],"#p":[""## + first + #"",""# + second + #""],"since":1700000000}"#)
        #expect(NwcFilter.requests(to: [String](), since: 0) == ##"{"kinds":[23194],"#p":[],"since":0}"##)
    }
}
