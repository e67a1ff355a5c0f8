import Foundation
import HTTPTypes
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Webhook intake and the local development provider")
struct WebhookTests {
    @Test("a swap.update webhook becomes the Breez push data, recorded by the local provider")
    func swapUpdate() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.live) { client in
            let response = try await client.post(
                "/api/v1/notify?platform=ios&token=abcdef0123&app_data=wallet-7",
                json: #"{"event":"swap.update","data":{"id":"swap-1","status":"transaction.mempool"}}"#
            )
            #expect(response.status == .ok)
            let id = try #require(response.json["id"] as? String)
            #expect(try await eventually { try await nds.store.status(jobID: id)?.state == .delivered })

            let pushes = try await nds.store.localPushes(platform: .ios, token: "abcdef0123", after: 0, limit: 10)
            #expect(pushes.count == 1)
            let payload = try #require(try JSONSerialization.jsonObject(with: pushes[0].payload) as? [String: Any])
            #expect(payload["notification_type"] as? String == "swap_updated")
            #expect(payload["notification_payload"] as? String == #"{"id":"swap-1","status":"transaction.mempool"}"#)
            #expect(payload["app_data"] as? String == "wallet-7")
            let aps = try #require(payload["aps"] as? [String: Any])
            #expect(aps["mutable-content"] as? Int == 1)
            #expect(aps["alert"] is [String: Any])
        }
    }

    @Test("an Android webhook is recorded as the FCM data map, every value a string")
    func android() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.live) { client in
            let response = try await client.post(
                "/api/v1/notify?platform=android&token=fcm:token-1",
                json: #"{"event":"invoice.request","data":{"offer":"lno1","invoiceRequest":"lnr1","reply_url":"https://swap.example/r/1"}}"#
            )
            #expect(response.status == .ok)
            #expect(
                try await eventually {
                    try await !nds.store.localPushes(platform: .android, token: "fcm:token-1", after: 0, limit: 1).isEmpty
                }
            )
            let push = try await nds.store.localPushes(platform: .android, token: "fcm:token-1", after: 0, limit: 1)[0]
            let map = try JSONDecoder().decode([String: String].self, from: push.payload)
            #expect(map["notification_type"] == "invoice_request")
            #expect(map["notification_payload"] == #"{"invoice_request":"lnr1","offer":"lno1","reply_url":"https://swap.example/r/1"}"#)
        }
    }

    @Test("a repeated Idempotency-Key returns the first job's id and pushes once")
    func idempotency() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.live) { client in
            let body = #"{"event":"swap.update","data":{"id":"s","status":"swap.expired"}}"#
            let first = try await client.post("/api/v1/notify?platform=ios&token=aa11", json: body, headers: [.init("Idempotency-Key")!: "evt-1"])
            let second = try await client.post("/api/v1/notify?platform=ios&token=aa11", json: body, headers: [.init("Idempotency-Key")!: "evt-1"])
            #expect(first.status == .ok)
            #expect(second.status == .ok)
            #expect(first.json["id"] as? String == second.json["id"] as? String)
            #expect(second.headers[.init("Idempotent-Replayed")!] == "true")
            let id = try #require(first.json["id"] as? String)
            #expect(try await eventually { try await nds.store.status(jobID: id)?.state == .delivered })
            // One job, finished: nothing is left that could push again.
            #expect(try await nds.store.counts() == QueueCounts(pending: 0, delivered: 1, dead: 0))
            #expect(try await nds.store.localPushes(platform: .ios, token: "aa11", after: 0, limit: 10).count == 1)
        }
    }

    struct BadInput: Sendable, CustomTestStringConvertible {
        var uri: String
        var body: String
        var status: HTTPResponse.Status
        var code: String
        var testDescription: String { code }
    }

    static let badInputs: [BadInput] = [
        BadInput(uri: "/api/v1/notify?platform=ios&token=74", body: "{not json", status: .badRequest, code: "invalid_json"),
        BadInput(uri: "/api/v1/notify?platform=ios&token=74", body: "", status: .badRequest, code: "invalid_json"),
        BadInput(uri: "/api/v1/notify?platform=ios&token=74", body: "[1,2]", status: .badRequest, code: "invalid_json"),
        BadInput(uri: "/api/v1/notify?platform=windows&token=74", body: #"{"event":"x","data":{}}"#, status: .badRequest, code: "unknown_platform"),
        BadInput(uri: "/api/v1/notify?platform=ios", body: #"{"event":"x","data":{}}"#, status: .badRequest, code: "missing_token"),
        BadInput(uri: "/api/v1/notify?token=74", body: #"{"event":"x","data":{}}"#, status: .badRequest, code: "missing_platform"),
        BadInput(uri: "/api/v1/notify?platform=ios&token=74", body: #"{"hello":"world"}"#, status: .badRequest, code: "unknown_body_shape"),
        // JSONDecoder traps on this number (Foundation's Decimal overflows): it once took the server down.
        BadInput(
            uri: "/api/v1/notify?platform=ios&token=74",
            body: #"{"event":"x","data":{"n":9007199254740993"# + String(repeating: "0", count: 150) + "e-150}}", status: .badRequest,
            code: "invalid_json"),
        BadInput(uri: "/api/v1/notify?platform=ios&token=74", body: #"{"event":"x","data":{"a":1,}}"#, status: .badRequest, code: "invalid_json"),
        BadInput(
            uri: "/api/v1/notify?platform=ios&token=74", body: #"{"event":"swap.update","data":{"id":"x"}}"#, status: .unprocessableContent,
            code: "invalid_data"),
        BadInput(
            uri: "/api/v1/notify?platform=ios&token=74",
            body: #"{"event":"big","data":{"blob":""# + String(repeating: "x", count: 70 * 1024) + #""}}"#,
            status: .contentTooLarge, code: "body_too_large"
        ),
        BadInput(
            uri: "/api/v1/notify?platform=ios&token=74",
            body: #"{"event":"big","data":{"blob":""# + String(repeating: "x", count: 5000) + #""}}"#,
            status: .unprocessableContent, code: "payload_too_large"
        ),
    ]

    @Test("bad input gets a 4xx with a machine-readable error and stores nothing", arguments: badInputs)
    func badInput(_ input: BadInput) async throws {
        let nds = try TestNDS()
        try await nds.app().test(.router) { client in
            let response = try await client.post(input.uri, json: input.body)
            #expect(response.status == input.status)
            #expect(response.json["error"] as? String == input.code)
            #expect((response.json["message"] as? String)?.isEmpty == false)
            #expect(response.headers[.contentType] == "application/json")
        }
        #expect(try await nds.store.counts() == QueueCounts(pending: 0, delivered: 0, dead: 0))
    }

    @Test("an Idempotency-Key planted with another body is refused to the real caller's body: 422, never the planted job")
    func poisonedKey() async throws {
        let nds = try TestNDS()
        let token = String(repeating: "9d", count: 32)
        try await nds.app().test(.router) { client in
            let key: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "swap-42-claimed"]
            let planted = try await client.post(
                "/api/v1/notify?platform=ios&token=\(token)", json: #"{"event":"swap.update","data":{"id":"swap-42","status":"swap.expired"}}"#,
                headers: key)
            #expect(planted.status == .ok)
            let real = #"{"event":"swap.update","data":{"id":"swap-42","status":"transaction.claimed"}}"#
            let refused = try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: real, headers: key)
            #expect(refused.status == .unprocessableContent, "\(refused.text)")
            #expect(refused.json["error"] as? String == "idempotency_key_reused")
            #expect(refused.json["id"] == nil)
            // The same body again is a retry, as before.
            let retried = try await client.post(
                "/api/v1/notify?platform=ios&token=\(token)", json: #"{"event":"swap.update","data":{"id":"swap-42","status":"swap.expired"}}"#,
                headers: key)
            #expect(retried.json["id"] as? String == planted.json["id"] as? String)
            #expect(retried.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
        }
    }

    @Test("an APNs token in upper case is the same target as in lower case: one allowance, one dead mark, one idempotency key, one registration")
    func tokenCase() async throws {
        let nds = try TestNDS()
        let lower = String(repeating: "5a5b", count: 16)
        let upper = lower.uppercased()
        let swap = #"{"event":"swap.update","data":{"id":"s1","status":"transaction.mempool"}}"#
        // Time stands still: no allowance refills while the test runs, however slowly.
        let clock = TestClock()
        try await nds.app(now: clock.function).test(.router) { client in
            // The idempotency key: the second spelling replays the first job.
            let key: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "k-case"]
            let first = try await client.post("/api/v1/notify?platform=ios&token=\(lower)", json: swap, headers: key)
            let second = try await client.post("/api/v1/notify?platform=ios&token=\(upper)", json: swap, headers: key)
            #expect(first.json["id"] as? String == second.json["id"] as? String)
            // The allowance: 20 at once, whichever the spelling.
            let other = String(repeating: "7c", count: 32)
            var statuses: [HTTPResponse.Status] = []
            for index in 0..<21 {
                let token = index.isMultiple(of: 2) ? other.uppercased() : other
                statuses.append(try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: swap).status)
            }
            #expect(statuses.prefix(20).allSatisfy { $0 == .ok } && statuses.last == .tooManyRequests, "\(statuses)")
            // The dead mark: the lower-case token is dead, so is the upper-case one.
            try await nds.store.markDead(platform: .ios, token: lower, reason: "Unregistered", now: Date())
            let dead = try await client.post("/api/v1/notify?platform=ios&token=\(upper)", json: swap)
            #expect(dead.status == .gone, "\(dead.text)")
            // Registration stores the one spelling.
            let registered = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(upper)"}"#)
            let alias = try #require(registered.json["alias"] as? String)
            #expect(try await nds.store.device(alias: alias)?.token == lower)
        }
    }

    @Test("an unknown route answers in the same JSON error shape")
    func unknownRoute() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.router) { client in
            let response = try await client.execute(uri: "/api/v1/nope", method: .get)
            #expect(response.status == .notFound)
            #expect(response.json["error"] as? String == "not_found")
        }
    }

    @Test("a job found past its TTL (say, after downtime) is dead-lettered, not sent")
    func ttl() async throws {
        let nds = try TestNDS()
        let past = Date().addingTimeInterval(-1)
        let job = NewJob(
            destination: .device(.ios), token: "74746c2d746f6b656e", notificationType: "swap_updated",
            payload: Data(#"{"kind":"wake","data":{}}"#.utf8), idempotencyKey: nil, expiresAt: past, app: Device.defaultApp
        )
        _ = try await nds.store.enqueue([job], now: past.addingTimeInterval(-60), leaseUntil: past)
        try await nds.app().test(.live) { _ async throws in
            #expect(try await eventually { try await nds.store.status(jobID: job.id)?.state == .dead })
            #expect(try await nds.store.status(jobID: job.id)?.lastError == "ttl_expired")
            #expect(try await nds.store.localPushes(platform: .ios, token: "74746c2d746f6b656e", after: 0, limit: 1).isEmpty)
        }
    }

    @Test("health and metrics answer")
    func operations() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.live) { client in
            _ = try await client.post(
                "/api/v1/notify?platform=ios&token=6d31", json: #"{"event":"swap.update","data":{"id":"s","status":"x"}}"#
            )
            let health = try await client.execute(uri: "/health", method: .get)
            #expect(health.status == .ok)
            #expect(health.json["status"] as? String == "ok")
            _ = try await eventually { try await nds.store.counts().delivered == 1 }
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            #expect(metrics.status == .ok)
            #expect(metrics.text.contains(#"herald_webhooks_received_total{type="swap_updated"} 1"#))
            #expect(metrics.text.contains(#"herald_pushes_sent_total{provider="local",outcome="delivered",app="default"} 1"#))
            #expect(metrics.text.contains("herald_push_send_duration_seconds_bucket"))
            #expect(metrics.text.contains("herald_outbox_pending"))
            // Counters whose labels are known are there before their first event, at zero.
            for zero in [
                "herald_target_rate_limited_total 0", "herald_wake_fallbacks_total 0", #"herald_wake_acks_total{outcome="handled"} 0"#,
                #"herald_nwc_events_total{outcome="forwarded"} 0"#, #"herald_devices_skipped_total{reason="unconfirmed"} 0"#,
            ] {
                #expect(metrics.text.contains(zero), "\(zero)")
            }
        }
    }

    @Test("caller-chosen event names cannot grow the metrics without bound")
    func metricLabelsBounded() {
        let metrics = HeraldMetrics()
        for i in 0..<(HeraldMetrics.maxTypeLabels + 10) { metrics.received(type: "custom_\(i)") }
        metrics.received(type: "custom_0")
        metrics.received(type: "custom_0")
        let text = metrics.render()
        let series = text.split(separator: "\n").filter { $0.hasPrefix("herald_webhooks_received_total{") }
        #expect(series.count == HeraldMetrics.maxTypeLabels + 1)
        #expect(series.contains(#"herald_webhooks_received_total{type="custom_0"} 3"#))
        #expect(series.contains(#"herald_webhooks_received_total{type="other"} 10"#))
    }
}
