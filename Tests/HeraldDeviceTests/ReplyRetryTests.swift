import Foundation
import HeraldWire
import Testing

@testable import HeraldDevice

@Suite("Replies are retried inside the deadline")
struct ReplyRetryTests {
    func infoPush(_ url: String) -> Data {
        Fixtures.apnsPush(type: .lnurlpayInfo, payload: ["callback_url": "https://c", "reply_url": .string(url)])
    }

    @Test("503 and 429 are retried until the reply is accepted")
    func retriesTransient() async throws {
        try await LoopbackHTTPServer.with(statuses: [503, 429, 200]) { server in
            let result = await Fixtures.plugin(wallet: RecordingWallet()).handle(json: infoPush(server.url("/r")))
            #expect(result.disposition == .handled)
            #expect(result.replies.map(\.attempts) == [3])
            #expect(result.replies.first?.outcome == .accepted)
            let bodies = await server.requests.map(\.bodyText)
            #expect(bodies.count == 3 && Set(bodies).count == 1)
        }
    }

    @Test(
        "the final answers end the retries",
        arguments: [(409, ReplyReport.Outcome.alreadyAnswered), (404, .expired), (410, .expired), (400, .refused)])
    func finalStatuses(status: Int, outcome: ReplyReport.Outcome) async throws {
        try await LoopbackHTTPServer.with(statuses: [status]) { server in
            let result = await Fixtures.plugin(wallet: RecordingWallet()).handle(json: infoPush(server.url("/r")))
            #expect(result.replies.first?.outcome == outcome)
            #expect(result.replies.first?.attempts == 1)
            #expect(result.disposition == (outcome == .alreadyAnswered ? .handled : .fellBack))
        }
    }

    @Test("a refused connection is retried and then falls back")
    func connectionRefused() async throws {
        let result = await Fixtures.plugin(wallet: RecordingWallet()).handle(json: infoPush("http://127.0.0.1:9/r"))
        #expect(result.disposition == .fellBack)
        #expect(result.replies.first?.outcome == .failed)
        #expect(result.replies.first?.attempts == 4)
    }

    @Test("a reply URL that is not http(s) is refused without a request")
    func badURL() async throws {
        let result = await Fixtures.plugin(wallet: RecordingWallet()).handle(json: infoPush("ftp://example/r"))
        #expect(result.replies.first?.outcome == .refused)
        #expect(result.content.title == "Receive Payment Failed")
    }
}
