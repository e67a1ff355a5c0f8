import AsyncHTTPClient
import Foundation
import HeraldSQLite
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing

@Suite("The reply relay: request and response through a sleeping phone")
struct ReplyRelayTests {
    static let invoiceRequest = #"{"event":"invoice.request","data":{"offer":"lno1offer","invoiceRequest":"lnr1request"}}"#

    @Test("a BOLT12 invoice request reaches the device with a reply_url, and its answer returns to the caller")
    func bolt12() async throws {
        let nds = try TestNDS()
        let phone = TestPhone(nds: nds, platform: .ios, token: "626f6c7431322d70686f6e65")
        try await withPhoneHTTP { http in
            try await nds.app().test(.live) { client in
                let port = try #require(client.port)
                async let held = client.post("/api/v1/notify?platform=ios&token=626f6c7431322d70686f6e65", json: Self.invoiceRequest)

                let push = try #require(try await phone.pushes(after: 0).first)
                #expect(push.type == "invoice_request")
                #expect(push.payload["offer"] as? String == "lno1offer")
                #expect(push.payload["invoice_request"] as? String == "lnr1request")
                let replyURL = try #require(push.replyURL)
                #expect(replyURL.hasPrefix("http://nds.test/api/v1/reply/"))
                #expect(replyURL.count - "http://nds.test/api/v1/reply/".count >= 32)

                let answered = try await TestPhone.answer(replyURL, json: #"{"invoice":"lni1invoice"}"#, port: port, using: http)
                #expect(answered.status == 200)
                let response = try await held
                #expect(response.status == .ok)
                #expect(response.text == #"{"invoice":"lni1invoice"}"#)
                #expect(response.headers[.contentType] == "application/json")

                // Single use: a second answer is refused, and the caller is not answered twice.
                let again = try await TestPhone.answer(replyURL, json: #"{"invoice":"lni1other"}"#, port: port, using: http)
                #expect(again.status == 409)
                #expect(again.body.contains(#""error":"already_answered""#))
                #expect(try await nds.store.replyCounts().pending == 0)
            }
        }
    }

    @Test("a caller's own reply_url passes through untouched and the webhook is answered at once")
    func callerReplyURL() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.live) { client in
            let response = try await client.post(
                "/api/v1/notify?platform=android&token=fcm-1",
                json: #"{"template":"lnurlpay_info","data":{"callback_url":"https://lnurl.example/cb","reply_url":"https://lnurl.example/reply/9"}}"#
            )
            #expect(response.status == .ok)
            #expect(response.json["id"] is String)
            let push = try #require(try await TestPhone(nds: nds, platform: .android, token: "fcm-1").pushes(after: 0).first)
            #expect(push.replyURL == "https://lnurl.example/reply/9")
            #expect(try await nds.store.replyCounts().total == 0)
        }
    }

    @Test("no answer within the reply timeout is 504; the reply URL then says 410, and 404 once forgotten")
    func timeout() async throws {
        var configured = try TestNDS()
        configured.settings.replyTimeout = .seconds(1)
        let nds = configured
        let phone = TestPhone(nds: nds, platform: .ios, token: "61736c656570")
        try await withPhoneHTTP { http in
            try await nds.app().test(.live) { client in
                let port = try #require(client.port)
                let started = ContinuousClock.now
                let response = try await client.post("/api/v1/notify?platform=ios&token=61736c656570", json: Self.invoiceRequest)
                let waited = ContinuousClock.now - started
                #expect(response.status == .gatewayTimeout)
                #expect(response.json["error"] as? String == "reply_timeout")
                #expect(waited >= .seconds(1) && waited < .seconds(5))
                #expect(try await nds.store.replyCounts().pending == 0)

                let replyURL = try #require(try await phone.pushes(after: 0).first?.replyURL)
                let late = try await TestPhone.answer(replyURL, json: #"{"invoice":"lni1late"}"#, port: port, using: http)
                #expect(late.status == 410)
                #expect(late.body.contains(#""error":"reply_expired""#))

                // The sweeper forgets expired reply URLs after their tombstone time.
                let purged = try await nds.store.purgeReplies(expiredBefore: Date().addingTimeInterval(3600))
                #expect(purged == 1)
                #expect(try await nds.store.replyCounts().total == 0)
                let forgotten = try await TestPhone.answer(replyURL, json: #"{"invoice":"lni1late"}"#, port: port, using: http)
                #expect(forgotten.status == 404)
                #expect(forgotten.body.contains(#""error":"unknown_reply""#))
            }
        }
    }

    @Test("the reply timeout runs on the injected clock: 30 s pass on it, not in the test, and not a second sooner")
    func timeoutOnTheClock() async throws {
        let nds = try TestNDS()  // the default 30 s reply timeout
        let clock = ManualClock()
        let phone = TestPhone(nds: nds, platform: .ios, token: "61736c6565702d636c6f636b6564")
        try await nds.app(clock: clock).test(.live) { client in
            let answered = NIOLockedValueBox<(status: HTTPResponse.Status, at: Duration)?>(nil)
            let request = Task {
                let response = try await client.post("/api/v1/notify?platform=ios&token=61736c6565702d636c6f636b6564", json: Self.invoiceRequest)
                answered.withLockedValue { $0 = (response.status, clock.now.offset) }
            }
            // The phone got the push: the request is held for its answer.
            #expect(try await eventually { try await phone.pushes(after: 0).first?.replyURL != nil })
            let started = ContinuousClock.now
            // Time moves a second at a time; the request ends once 30 s have passed on the clock.
            #expect(
                await eventually(timeout: .seconds(20)) {
                    clock.advance(by: .seconds(1))
                    return answered.withLockedValue { $0 } != nil
                })
            try await request.value
            let answer = try #require(answered.withLockedValue { $0 })
            #expect(answer.status == .gatewayTimeout)
            #expect(answer.at >= .seconds(30) && answer.at <= .seconds(33), "\(answer.at)")
            #expect(ContinuousClock.now - started < .seconds(15))
            #expect(try await nds.store.replyCounts().pending == 0)
        }
    }

    @Test("an unknown reply id is 404, a non-JSON answer 400, an oversized one 413 and the request still waits")
    func refusedAnswers() async throws {
        let nds = try TestNDS()
        let phone = TestPhone(nds: nds, platform: .ios, token: "6269672d616e73776572")
        try await withPhoneHTTP { http in
            try await nds.app().test(.live) { client in
                let port = try #require(client.port)
                let unknown = try await TestPhone.answer(
                    "http://nds.test/api/v1/reply/no-such-reply", json: "{}", port: port, using: http
                )
                #expect(unknown.status == 404)
                #expect(unknown.body.contains(#""error":"unknown_reply""#))

                async let held = client.post("/api/v1/notify?platform=ios&token=6269672d616e73776572", json: Self.invoiceRequest)
                let replyURL = try #require(try await phone.pushes(after: 0).first?.replyURL)

                let huge = #"{"invoice":""# + String(repeating: "x", count: nds.settings.replyBodyLimit) + #""}"#
                let oversized = try await TestPhone.answer(replyURL, json: huge, port: port, using: http)
                #expect(oversized.status == 413)
                #expect(oversized.body.contains(#""error":"reply_too_large""#))
                let notJSON = try await TestPhone.answer(replyURL, json: "lni1", port: port, using: http)
                #expect(notJSON.status == 400)
                #expect(notJSON.body.contains(#""error":"invalid_json""#))

                let fits = try await TestPhone.answer(replyURL, json: #"{"invoice":"lni1small"}"#, port: port, using: http)
                #expect(fits.status == 200)
                #expect(try await held.text == #"{"invoice":"lni1small"}"#)
                #expect(try await nds.store.replyCounts().pending == 0)
            }
        }
    }

    @Test("an answer this process takes completes its held request without the store poll")
    func inProcessSignal() async throws {
        var configured = try TestNDS()
        // The cross-process poll would not run before the reply timeout: only the in-process
        // hand-over can answer the caller.
        configured.settings.replyPollInterval = .seconds(3600)
        let nds = configured
        let phone = TestPhone(nds: nds, platform: .ios, token: "73616d652d70726f63657373")
        try await nds.app().test(.router) { client in
            async let held = client.post("/api/v1/notify?platform=ios&token=73616d652d70726f63657373", json: Self.invoiceRequest)
            let replyURL = try #require(try await phone.pushes(after: 0).first?.replyURL)
            // Whenever the relay's first poll ran, this answer was not in the store yet; the next is an hour away.
            let answered = try await client.post(
                String(replyURL.dropFirst("http://nds.test".count)), json: #"{"invoice":"lni1here"}"#
            )
            #expect(answered.status == .ok)
            let response = try await held
            #expect(response.status == .ok)
            #expect(response.text == #"{"invoice":"lni1here"}"#)
        }
    }
    // Answers reaching another instance on a shared database: PostgresServeTests.crossInstance.
    // A SQLite file has one `serve` (DatabaseProcessLock), so its relay neither listens nor polls.
}

/// Runs `body` with an HTTP client for the test phone, shut down afterwards.
func withPhoneHTTP<T>(_ body: (HTTPClient) async throws -> T) async throws -> T {
    let http = TestPhone.makeHTTPClient()
    do {
        let value = try await body(http)
        try await http.shutdown()
        return value
    } catch {
        try? await http.shutdown()
        throw error
    }
}
