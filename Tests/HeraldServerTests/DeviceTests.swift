import Foundation
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Device registration and aliases")
struct DeviceTests {
    @Test("an app registers, gets an alias webhook URL, and a push to the alias reaches the real token")
    func registerAndNotify() async throws {
        let nds = try TestNDS(acceptRawTokens: false)
        try await nds.app().test(.live) { client in
            let created = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"7265616c2d61706e732d746f6b656e"}"#)
            #expect(created.status == .created)
            let webhook = try #require(created.json["webhook_url"] as? String)
            let alias = try #require(created.json["alias"] as? String)
            #expect(webhook == "http://nds.test/api/v1/notify?platform=ios&token=\(alias)")
            #expect(!webhook.contains("7265616c2d61706e732d746f6b656e"))
            #expect((created.json["device_secret"] as? String)?.count ?? 0 >= 40)

            let path = String(webhook.dropFirst("http://nds.test".count))
            let sent = try await client.post(path, json: #"{"event":"swap.update","data":{"id":"s","status":"x"}}"#)
            #expect(sent.status == .ok)
            #expect(
                try await eventually {
                    try await nds.store.localPushes(platform: .ios, token: "7265616c2d61706e732d746f6b656e", after: 0, limit: 1).count == 1
                }
            )

            // Alias-only mode: a raw token is refused.
            let raw = try await client.post(
                "/api/v1/notify?platform=ios&token=7265616c2d61706e732d746f6b656e", json: #"{"event":"swap.update","data":{"id":"s","status":"x"}}"#
            )
            #expect(raw.status == .notFound)
            #expect(raw.json["error"] as? String == "unknown_token")
        }
    }

    @Test("forty devices rotate token and LSP node id at once, and one device takes twenty rotations at once: each lands whole")
    func concurrentUpdates() async throws {
        var nds = try TestNDS()
        nds.settings.registrationsPerMinute = 1000
        let store = nds.store
        let lsp = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
        try await nds.app().test(.live) { client in
            var devices: [(id: String, secret: String, alias: String)] = []
            for n in 0..<40 {
                let created = try await client.post("/api/v1/devices", json: #"{"platform":"android","push_token":"before-\#(n)"}"#)
                devices.append(
                    (
                        try #require(created.json["device_id"] as? String), try #require(created.json["device_secret"] as? String),
                        try #require(created.json["alias"] as? String)
                    ))
            }
            func put(_ device: (id: String, secret: String, alias: String), _ json: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/api/v1/devices/\(device.id)", method: .put,
                    headers: [.contentType: "application/json", .authorization: "Bearer \(device.secret)"], body: ByteBuffer(string: json))
            }
            let answers = try await withThrowingTaskGroup(of: (Int, HTTPResponse.Status, String?).self) { group in
                for (n, device) in devices.enumerated() {
                    group.addTask {
                        let answer = try await put(device, #"{"push_token":"after-\#(n)","lsp_node_id":"\#(lsp)"}"#)
                        return (n, answer.status, answer.json["lsp_node_id"] as? String)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == 40 && answers.allSatisfy { $0.1 == .ok && $0.2 == lsp })
            for (n, device) in devices.enumerated() {
                #expect(try await store.device(alias: device.alias)?.token == "after-\(n)")
            }
            // Twenty rotations of one device at once: every one answered, and the device holds one of them.
            let target = devices[0]
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for n in 0..<20 { group.addTask { try await put(target, #"{"push_token":"race-\#(n)"}"#).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.count == 20 && statuses.allSatisfy { $0 == .ok })
            let token = try await store.device(alias: target.alias)?.token
            #expect(token.map { $0.hasPrefix("race-") } == true)
        }
    }

    @Test("the device secret rotates the token and deletes the device; the alias alone cannot")
    func rotateAndDelete() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.router) { client in
            let created = try await client.post("/api/v1/devices", json: #"{"platform":"android","push_token":"old"}"#)
            let id = try #require(created.json["device_id"] as? String)
            let secret = try #require(created.json["device_secret"] as? String)
            let alias = try #require(created.json["alias"] as? String)

            let noAuth = try await client.execute(
                uri: "/api/v1/devices/\(id)", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"push_token":"new"}"#)
            )
            #expect(noAuth.status == .unauthorized)
            let withAlias = try await client.execute(
                uri: "/api/v1/devices/\(id)", method: .put,
                headers: [.contentType: "application/json", .authorization: "Bearer \(alias)"],
                body: ByteBuffer(string: #"{"push_token":"new"}"#)
            )
            #expect(withAlias.status == .unauthorized)
            #expect(withAlias.json["error"] as? String == "unauthorized")

            let rotated = try await client.execute(
                uri: "/api/v1/devices/\(id)", method: .put,
                headers: [.contentType: "application/json", .authorization: "Bearer \(secret)"],
                body: ByteBuffer(string: #"{"push_token":"new"}"#)
            )
            #expect(rotated.status == .ok)
            #expect(try await nds.store.device(alias: alias)?.token == "new")

            let deleted = try await client.execute(
                uri: "/api/v1/devices/\(id)", method: .delete, headers: [.authorization: "Bearer \(secret)"]
            )
            #expect(deleted.status == .noContent)
            #expect(try await nds.store.device(alias: alias) == nil)
        }
    }

    @Test("a deleted device's webhook URL answers 410 device_deleted, and its alias is never pushed as a raw token")
    func deletedAliasIsGone() async throws {
        let nds = try TestNDS()  // raw tokens accepted, as by default
        try await nds.app().test(.live) { client in
            let created = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(String(repeating: "ab", count: 32))"}"#)
            let id = try #require(created.json["device_id"] as? String)
            let secret = try #require(created.json["device_secret"] as? String)
            let alias = try #require(created.json["alias"] as? String)
            let swap = #"{"event":"swap.update","data":{"id":"d1","status":"transaction.mempool"}}"#
            #expect(try await client.post("/api/v1/notify?token=\(alias)", json: swap).status == .ok)

            let deleted = try await client.execute(uri: "/api/v1/devices/\(id)", method: .delete, headers: [.authorization: "Bearer \(secret)"])
            #expect(deleted.status == .noContent)
            for uri in ["/api/v1/notify?token=\(alias)", "/api/v1/notify?platform=ios&token=\(alias)"] {
                let after = try await client.post(uri, json: swap)
                #expect(after.status == .gone, "\(uri)")
                #expect(after.json["error"] as? String == "device_deleted", "\(uri)")
            }
            // A token of an alias's form that no device ever had is not a raw token either.
            let never = try await client.post("/api/v1/notify?platform=ios&token=a.\(String(repeating: "Q", count: 24))", json: swap)
            #expect(never.status == .notFound)
            #expect(never.json["error"] as? String == "unknown_token")
            // Nothing was ever pushed to the alias as if it were a device token.
            #expect(try await nds.store.localPushes(platform: .ios, token: alias, after: 0, limit: 10).isEmpty)
            #expect(try await nds.store.counts().pending + nds.store.counts().delivered == 1)
        }
    }

    @Test(
        "100 concurrent webhooks while the device is deleted: each is 200 before the delete or 410 device_deleted after it, never a raw push; bad tokens refused alike"
    )
    func concurrentDeleteAndForms() async throws {
        var configured = try TestNDS()
        // One phone takes all of them: lift its allowance, which is not what this measures.
        configured.settings.targetPushesPerMinute = 1_000_000
        configured.settings.targetPushBurst = 1_000_000
        let nds = configured
        try await nds.app().test(.live) { client in
            let created = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(String(repeating: "e1", count: 32))"}"#)
            let id = try #require(created.json["device_id"] as? String)
            let secret = try #require(created.json["device_secret"] as? String)
            let alias = try #require(created.json["alias"] as? String)
            let swap = #"{"event":"swap.update","data":{"id":"c","status":"transaction.mempool"}}"#
            let outcomes = try await withThrowingTaskGroup(of: (String, Int, String?).self) { group in
                for n in 0..<100 {
                    group.addTask {
                        if n == 30 {
                            let deleted = try await client.execute(
                                uri: "/api/v1/devices/\(id)", method: .delete, headers: [.authorization: "Bearer \(secret)"])
                            return ("delete", Int(deleted.status.code), nil)
                        }
                        // Every tenth one names a token that is not APNs's form.
                        let token = n.isMultiple(of: 10) ? "not-hex-\(n)" : alias
                        let answer = try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: swap)
                        return (token == alias ? "alias" : "bad", Int(answer.status.code), answer.json["error"] as? String)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0.0 == "delete" }.map(\.1) == [204])
            for (kind, status, error) in outcomes where kind == "alias" {
                #expect(status == 200 || (status == 410 && error == "device_deleted"), "\(status) \(error ?? "-")")
            }
            #expect(outcomes.filter { $0.0 == "bad" }.allSatisfy { $0.1 == 400 && $0.2 == "invalid_token" })
            // Whatever was acknowledged went to the device's token; nothing to the alias as a token.
            #expect(try await nds.store.localPushes(platform: .ios, token: alias, after: 0, limit: 10).isEmpty)
            let acknowledged = outcomes.filter { $0.0 == "alias" && $0.1 == 200 }.count
            #expect(
                try await eventually {
                    try await nds.store.localPushes(platform: .ios, token: String(repeating: "e1", count: 32), after: 0, limit: 200).count
                        == acknowledged
                })
            // After the delete, the alias stays gone.
            #expect(try await client.post("/api/v1/notify?token=\(alias)", json: swap).status == .gone)
        }
    }

    @Test("a token's form is checked for its platform at every entrance, with the local provider as with APNs: 400 invalid_token")
    func tokenForm() async throws {
        var configured = try TestNDS()  // the local development provider
        configured.settings.registrationsPerMinute = 30
        let nds = configured
        let key = try await nds.apiKey([.sessions])
        try await nds.app().test(.router) { client in
            let apns = String(repeating: "ab", count: 32)
            for (platform, bad) in [
                ("ios", "<APNs device token>"), ("ios", "abc"), ("ios", "not-hex-at-all!"), ("android", "has space"), ("android", "dots.are.not.fcm"),
            ] {
                let registered = try await client.post("/api/v1/devices", json: #"{"platform":"\#(platform)","push_token":"\#(bad)"}"#)
                #expect(registered.status == .badRequest, "\(platform) \(bad)")
                #expect(registered.json["error"] as? String == "invalid_token", "\(platform) \(bad)")
                let encoded = bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? bad
                let raw = try await client.post(
                    "/api/v1/notify?platform=\(platform)&token=\(encoded)", json: #"{"event":"swap.update","data":{"id":"f","status":"x"}}"#)
                #expect(raw.status == .badRequest, "\(platform) \(bad)")
                #expect(raw.json["error"] as? String == "invalid_token", "\(platform) \(bad)")
                let session = try await client.call(
                    .put, "/api/v1/users/u1/sessions/s1", key: key,
                    json: #"{"allow_notifications":true,"platform":"\#(platform)","push_token":"\#(bad)"}"#)
                #expect(session.status == .badRequest, "\(platform) \(bad)")
                #expect(session.json["error"] as? String == "invalid_token", "\(platform) \(bad)")
            }
            // PUT checks the new token against the device's platform.
            let created = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(apns)"}"#)
            #expect(created.status == .created)
            let id = try #require(created.json["device_id"] as? String)
            let secret = try #require(created.json["device_secret"] as? String)
            let rotated = try await client.execute(
                uri: "/api/v1/devices/\(id)", method: .put,
                headers: [.contentType: "application/json", .authorization: "Bearer \(secret)"],
                body: ByteBuffer(string: #"{"push_token":"fcm-style-token"}"#))
            #expect(rotated.status == .badRequest)
            #expect(rotated.json["error"] as? String == "invalid_token")
            #expect(try await nds.store.counts().pending == 0)
        }
    }

    @Test("registration is rate-limited per client address")
    func rateLimit() async throws {
        let nds = try TestNDS()  // 5 a minute
        try await nds.app().test(.live) { client in
            for _ in 0..<5 {
                let ok = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"74"}"#)
                #expect(ok.status == .created)
            }
            let limited = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"74"}"#)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.json["error"] as? String == "rate_limited")
            #expect(limited.headers[.retryAfter] != nil)
        }
    }

    @Test("registration refuses bad bodies with the JSON error shape")
    func badRegistration() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.router) { client in
            let notJSON = try await client.post("/api/v1/devices", json: "nope")
            #expect(notJSON.status == .badRequest)
            #expect(notJSON.json["error"] as? String == "invalid_json")
            let platform = try await client.post("/api/v1/devices", json: #"{"platform":"symbian","push_token":"74"}"#)
            #expect(platform.json["error"] as? String == "unknown_platform")
            let missing = try await client.post("/api/v1/devices", json: #"{"platform":"ios"}"#)
            #expect(missing.status == .unprocessableContent)
            #expect(missing.json["error"] as? String == "invalid_body")
        }
    }

    @Test("the push feed opens only with the device's secret and long-polls for new pushes")
    func pushFeed() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.live) { client in
            let created = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"666565642d746f6b656e"}"#)
            let id = try #require(created.json["device_id"] as? String)
            let secret = try #require(created.json["device_secret"] as? String)
            let alias = try #require(created.json["alias"] as? String)

            let denied = try await client.execute(uri: "/api/v1/devices/\(id)/pushes", method: .get, headers: [.authorization: "Bearer \(alias)"])
            #expect(denied.status == .unauthorized)

            _ = try await client.post(
                "/api/v1/notify?platform=ios&token=\(alias)", json: #"{"event":"swap.update","data":{"id":"f","status":"x"}}"#
            )
            let feed = try await client.execute(
                uri: "/api/v1/devices/\(id)/pushes?after=0&wait=5", method: .get, headers: [.authorization: "Bearer \(secret)"]
            )
            #expect(feed.status == .ok)
            let pushes = try #require(feed.json["pushes"] as? [[String: Any]])
            #expect(pushes.count == 1)
            let payload = try #require(pushes.first?["payload"] as? [String: Any])
            #expect(payload["notification_type"] as? String == "swap_updated")
            let next = try #require(feed.json["next"] as? Int)
            let empty = try await client.execute(
                uri: "/api/v1/devices/\(id)/pushes?after=\(next)&wait=0.2", method: .get, headers: [.authorization: "Bearer \(secret)"]
            )
            #expect((empty.json["pushes"] as? [Any])?.isEmpty == true)
        }
    }
}
