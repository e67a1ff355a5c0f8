import Foundation
import HTTPTypes
import HeraldDevice
import HeraldPush
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// A swap's progress as an iOS Live Activity, from Breez's `swap.update` webhooks, against the
/// APNs look-alike (which holds pushes to ActivityKit's rules).
@Suite("Live Activities for swaps")
struct LiveActivityTests {
    static let startToken = String(repeating: "5a", count: 32)
    static let activityToken = String(repeating: "ac", count: 32)

    static func swap(_ id: String, _ status: String) -> String {
        #"{"event":"swap.update","data":{"id":"\#(id)","status":"\#(status)"}}"#
    }

    /// The first `count` pushes to the activity's token, once that many have arrived.
    static func activityPushes(_ servers: MockPushServers, count: Int) async throws -> [MockAPNsRequest] {
        #expect(try await eventually { await servers.apns.requests.all.filter { $0.deviceToken == activityToken }.count >= count })
        return Array(await servers.apns.requests.all.filter { $0.deviceToken == activityToken }.prefix(count))
    }

    static func aps(_ request: MockAPNsRequest) throws -> [String: Any] {
        try #require(request.json?["aps"] as? [String: Any])
    }

    @Test(
        "a swap from first status to claim: one start on the push-to-start token, updates at priority 5 with increasing timestamps, one end; the phone's own push as before"
    )
    func lifecycle() async throws {
        let nds = try TestNDS()
        let deviceToken = String(repeating: "d1", count: 32)
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                // Live Activities are iOS's; the token is an APNs token.
                let android = try await client.post(
                    "/api/v1/devices", json: #"{"platform":"android","push_token":"fcm-1","live_activity":{"push_to_start_token":"5a5a"}}"#)
                #expect(android.status == .badRequest && android.json["error"] as? String == "invalid_request")
                let badToken = try await client.post(
                    "/api/v1/devices", json: #"{"platform":"ios","push_token":"d1d1","live_activity":{"push_to_start_token":"not hex"}}"#)
                #expect(badToken.status == .badRequest && badToken.json["error"] as? String == "invalid_token")
                let created = try await client.post(
                    "/api/v1/devices",
                    json: #"{"platform":"ios","push_token":"\#(deviceToken)","live_activity":{"push_to_start_token":"\#(Self.startToken)"}}"#)
                #expect(created.status == .created)
                let device = try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: created.body))
                let notify = "/api/v1/notify?token=\(device.alias)"
                #expect(try await client.post(notify, json: Self.swap("s-1", "transaction.mempool")).status == .ok)
                // The phone's swap_updated push, and the activity's start.
                let requests = try await servers.apns.requests.waitFor(count: 2)
                let start = try #require(requests.first { $0.deviceToken == Self.startToken })
                #expect(requests.contains { $0.deviceToken == deviceToken && $0.headers["apns-push-type"] == "alert" })
                #expect(start.headers["apns-push-type"] == "liveactivity")
                #expect(start.headers["apns-topic"] == servers.topic + ".push-type.liveactivity")
                #expect(start.headers["apns-priority"] == "10")
                let startAPS = try Self.aps(start)
                #expect(startAPS["event"] as? String == "start")
                #expect(startAPS["attributes-type"] as? String == "SwapActivityAttributes")
                #expect((startAPS["attributes"] as? [String: Any])?["swap_id"] as? String == "s-1")
                let state = try #require(startAPS["content-state"] as? [String: Any])
                #expect(state["status"] as? String == "transaction.mempool")
                #expect(state["step"] as? Int == 2 && state["steps"] as? Int == 4)
                #expect(state["updated_at"] is Int)
                #expect(startAPS["alert"] != nil && startAPS["stale-date"] is Int && startAPS["dismissal-date"] == nil)
                let startTimestamp = try #require(startAPS["timestamp"] as? Int)

                // The app hands Herald the started activity's token.
                let put = try await client.call(
                    .put, "/api/v1/devices/\(device.deviceID)/live-activities/s-1", key: device.deviceSecret,
                    json: #"{"push_token":"\#(Self.activityToken)"}"#)
                #expect(put.status == .noContent)

                #expect(try await client.post(notify, json: Self.swap("s-1", "transaction.confirmed")).status == .ok)
                let update = try await Self.activityPushes(servers, count: 1)[0]
                #expect(try Self.aps(update)["event"] as? String == "update")
                #expect(update.headers["apns-priority"] == "5")
                // Then, within a second: a status waiting for its slot, a stale one, and the claim, which
                // takes the waiting one's place: Apple's budget is one update a second.
                for status in ["transaction.claim.pending", "transaction.mempool", "transaction.claimed"] {
                    #expect(try await client.post(notify, json: Self.swap("s-1", status)).status == .ok)
                }
                let activity = try await Self.activityPushes(servers, count: 2)
                let events = try activity.map { try Self.aps($0)["event"] as? String }
                let statuses = try activity.map { ((try Self.aps($0))["content-state"] as? [String: Any])?["status"] as? String }
                #expect(events == ["update", "end"])
                #expect(statuses == ["transaction.confirmed", "transaction.claimed"])
                #expect(activity[1].arrival.timeIntervalSince(activity[0].arrival) >= 0.9)
                let end = try Self.aps(activity[1])
                #expect(activity[1].headers["apns-priority"] == "10")
                #expect(activity[1].headers["apns-topic"] == servers.topic + ".push-type.liveactivity")
                let timestamps = try activity.map { try #require(Self.aps($0)["timestamp"] as? Int) }
                #expect(startTimestamp < timestamps[0])
                #expect(timestamps[0] < timestamps[1])
                let updatedAt = (end["content-state"] as? [String: Any])?["updated_at"] as? Int
                #expect(end["dismissal-date"] as? Int == updatedAt.map { $0 + 900 })
                #expect(end["alert"] != nil)
                // The phone got its own push for each of the five statuses.
                #expect(
                    try await eventually {
                        await servers.apns.requests.all.filter { $0.deviceToken == deviceToken }.count == 5
                    })

                // After the end, nothing more for this swap.
                #expect(try await client.post(notify, json: Self.swap("s-1", "transaction.claimed")).status == .ok)
                #expect(
                    try await eventually {
                        await servers.apns.requests.all.filter { $0.deviceToken == deviceToken }.count == 6
                    })
                // Every job finished (the replaced update deleted unsent): no other activity push can come.
                #expect(try await eventually { try await nds.store.counts().pending == 0 })
                #expect(await servers.apns.requests.all.filter { $0.deviceToken == Self.activityToken }.count == 2)
                // The app forgets the ended activity: once, then there is none.
                let forget = "/api/v1/devices/\(device.deviceID)/live-activities/s-1"
                #expect(try await client.call(.delete, forget, key: device.deviceSecret).status == .noContent)
                let again = try await client.call(.delete, forget, key: device.deviceSecret)
                #expect(again.status == .notFound && again.json["error"] as? String == "unknown_live_activity")
            }
        }
    }

    @Test("two swaps at once keep apart; a 410 on one activity's token drops that token only: the phone's pushes and the other activity go on")
    func twoSwapsAndADeadActivityToken() async throws {
        let nds = try TestNDS()
        let deviceToken = String(repeating: "d2", count: 32)
        let device = try await nds.store.registerDevice(platform: .ios, token: deviceToken, now: Date())
        let tokens = ["a": String(repeating: "a1", count: 32), "b": String(repeating: "b1", count: 32)]
        for (swap, token) in tokens {
            try await nds.store.setLiveActivityToken(deviceID: device.device.id, swapID: swap, token: token, now: Date())
        }
        try await nds.withMockPush { servers, providers in
            await servers.apns.script.always(.unregistered, for: tokens["a"]!)
            try await nds.app(providers: providers).test(.live) { client in
                let notify = "/api/v1/notify?token=\(device.device.alias)"
                for swap in ["a", "b"] {
                    #expect(try await client.post(notify, json: Self.swap(swap, "transaction.mempool")).status == .ok)
                }
                #expect(
                    try await eventually {
                        let all = await servers.apns.requests.all
                        return all.filter { $0.deviceToken == deviceToken }.count == 2 && all.contains { $0.deviceToken == tokens["b"]! }
                            && all.contains { $0.deviceToken == tokens["a"]! }
                    })
                let b = try #require(await servers.apns.requests.all.first { $0.deviceToken == tokens["b"]! })
                #expect((try Self.aps(b)["attributes"]) == nil)
                #expect(((try Self.aps(b))["content-state"] as? [String: Any])?["status"] as? String == "transaction.mempool")
                // APNs said swap a's activity token is gone; the device's own token is not.
                #expect(try await eventually { try await nds.store.counts().pending == 0 })
                for swap in ["a", "b"] {
                    #expect(try await client.post(notify, json: Self.swap(swap, "transaction.claimed")).status == .ok)
                }
                #expect(
                    try await eventually {
                        let all = await servers.apns.requests.all
                        return all.filter { $0.deviceToken == deviceToken }.count == 4
                            && all.filter { $0.deviceToken == tokens["b"]! }.count == 2
                    })
                #expect(try await eventually { try await nds.store.counts().pending == 0 })
                let all = await servers.apns.requests.all
                // Nothing more went to the dead token; swap b ended on its own.
                #expect(all.filter { $0.deviceToken == tokens["a"]! }.count == 1)
                #expect(((try Self.aps(try #require(all.last { $0.deviceToken == tokens["b"]! })))["event"] as? String) == "end")
                let wallet = try await client.post(notify, json: #"{"event":"swap.update","data":{"id":"c","status":"x"}}"#)
                #expect(wallet.status == .ok)
            }
        }
    }

    @Test(
        "strangers: another device's secret or none cannot set or delete an activity's token; under registration: challenge an unconfirmed phone's swap starts nothing"
    )
    func strangers() async throws {
        var configured = try TestNDS()
        configured.settings.registration = .challenge
        let nds = configured
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let created = try await client.post(
                    "/api/v1/devices",
                    json:
                        #"{"platform":"ios","push_token":"\#(String(repeating: "e1", count: 32))","live_activity":{"push_to_start_token":"\#(Self.startToken)"}}"#
                )
                #expect(created.status == .created)
                let device = try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: created.body))
                let other = try WireJSON.decode(
                    DeviceRegistrationAnswer.self,
                    from: Data(buffer: try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"e2e2"}"#).body))
                let path = "/api/v1/devices/\(device.deviceID)/live-activities/s-9"
                let body = #"{"push_token":"\#(Self.activityToken)"}"#
                for key in [other.deviceSecret, nil, "not-a-secret"] {
                    #expect(try await client.call(.put, path, key: key, json: body).status == .unauthorized)
                    #expect(try await client.call(.delete, path, key: key).status == .unauthorized)
                }
                // Unconfirmed: the alias pushes nothing, the activity included.
                let notify = try await client.post("/api/v1/notify?token=\(device.alias)", json: Self.swap("s-9", "transaction.mempool"))
                #expect(notify.status == .forbidden && notify.json["error"] as? String == "device_unconfirmed")
                // Only the two challenge pushes went out.
                #expect(try await eventually { await servers.apns.requests.all.count == 2 })
                #expect(await servers.apns.requests.all.allSatisfy { $0.deviceToken != Self.startToken })
            }
        }
    }

    /// The pushes the APNs look-alike took for `token`.
    static func received(_ servers: MockPushServers, _ token: String) async -> [MockAPNsRequest] {
        await servers.apns.requests.all.filter { $0.deviceToken == token }
    }

    @Test(
        "key: a push-to-start token is registered only with a devices key (401 unauthorized without one or with a device secret, 403 forbidden with another scope); the app's activity token goes in with the device secret; strangers, and the API key itself, cannot set, replace or delete either token"
    )
    func keyMode() async throws {
        var configured = try TestNDS()
        configured.settings.registration = .key
        let nds = configured
        let devicesKey = try await nds.apiKey([.devices])
        let wakeKey = try await nds.apiKey([.wake])
        let deviceToken = String(repeating: "d3", count: 32)
        let strangerToken = String(repeating: "af", count: 32)
        let registration = #"{"platform":"ios","push_token":"\#(deviceToken)","live_activity":{"push_to_start_token":"\#(Self.startToken)"}}"#
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let anonymous = try await client.post("/api/v1/devices", json: registration)
                #expect(anonymous.status == .unauthorized && anonymous.json["error"] as? String == "unauthorized", "\(anonymous.text)")
                let wrongScope = try await client.post("/api/v1/devices", json: registration, headers: [.authorization: "Bearer \(wakeKey)"])
                #expect(wrongScope.status == .forbidden && wrongScope.json["error"] as? String == "forbidden", "\(wrongScope.text)")

                let created = try await client.post("/api/v1/devices", json: registration, headers: [.authorization: "Bearer \(devicesKey)"])
                #expect(created.status == .created, "\(created.text)")
                let device = try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: created.body))
                #expect(try await nds.store.liveActivityStartToken(deviceID: device.deviceID) == Self.startToken)
                let other = try WireJSON.decode(
                    DeviceRegistrationAnswer.self,
                    from: Data(
                        buffer: try await client.post(
                            "/api/v1/devices", json: #"{"platform":"ios","push_token":"e5e5"}"#, headers: [.authorization: "Bearer \(devicesKey)"]
                        ).body))
                // A device secret is not a devices key: it registers nothing.
                let bySecret = try await client.post(
                    "/api/v1/devices", json: registration, headers: [.authorization: "Bearer \(other.deviceSecret ?? "")"])
                #expect(bySecret.status == .unauthorized && bySecret.json["error"] as? String == "unauthorized", "\(bySecret.text)")

                // Nobody but the device moves its push-to-start token; the device does, with its secret alone.
                let moveStart = #"{"live_activity":{"push_to_start_token":"\#(strangerToken)"}}"#
                for key in [other.deviceSecret, nil, "not-a-secret", devicesKey] {
                    let moved = try await client.call(.put, "/api/v1/devices/\(device.deviceID)", key: key, json: moveStart)
                    #expect(moved.status == .unauthorized && moved.json["error"] as? String == "unauthorized", "\(moved.text)")
                }
                #expect(try await nds.store.liveActivityStartToken(deviceID: device.deviceID) == Self.startToken)
                let kept = try await client.call(
                    .put, "/api/v1/devices/\(device.deviceID)", key: device.deviceSecret,
                    json: #"{"live_activity":{"push_to_start_token":"\#(Self.startToken)"}}"#)
                #expect(kept.status == .ok, "\(kept.text)")

                let notify = "/api/v1/notify?token=\(device.alias)"
                #expect(try await client.post(notify, json: Self.swap("s-k", "transaction.mempool")).status == .ok)
                #expect(try await eventually { await Self.received(servers, Self.startToken).count == 1 })

                // The app hands over the activity's token with the device secret, no API key needed.
                let path = "/api/v1/devices/\(device.deviceID)/live-activities/s-k"
                let put = try await client.call(.put, path, key: device.deviceSecret, json: #"{"push_token":"\#(Self.activityToken)"}"#)
                #expect(put.status == .noContent, "\(put.text)")
                for key in [other.deviceSecret, nil, "not-a-secret", devicesKey] {
                    let replaced = try await client.call(.put, path, key: key, json: #"{"push_token":"\#(strangerToken)"}"#)
                    #expect(replaced.status == .unauthorized && replaced.json["error"] as? String == "unauthorized", "\(replaced.text)")
                    let deleted = try await client.call(.delete, path, key: key)
                    #expect(deleted.status == .unauthorized && deleted.json["error"] as? String == "unauthorized", "\(deleted.text)")
                }
                // The next status updates the device's activity: neither replaced nor forgotten.
                #expect(try await client.post(notify, json: Self.swap("s-k", "transaction.confirmed")).status == .ok)
                let update = try await Self.activityPushes(servers, count: 1)[0]
                #expect(try Self.aps(update)["event"] as? String == "update")
                #expect(try await eventually { try await nds.store.counts().pending == 0 })
                #expect(await Self.received(servers, strangerToken).isEmpty)
                #expect(await Self.received(servers, Self.startToken).count == 1)
                #expect(await Self.received(servers, deviceToken).count == 2)
            }
        }
    }

    @Test(
        "challenge: a confirmed phone that moves to a new token drives no Live Activity (start token or activity token) until the new token is confirmed; then the activity is updated again"
    )
    func challengeAfterMove() async throws {
        var configured = try TestNDS()
        configured.settings.registration = .challenge
        let nds = configured
        let firstToken = String(repeating: "e3", count: 32)
        let movedToken = String(repeating: "e4", count: 32)
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                /// What the plugin does with the challenge push that reached `token`: posts its code back.
                func confirm(_ token: String) async throws {
                    #expect(try await eventually { await !Self.received(servers, token).isEmpty })
                    let pushed = try #require(await Self.received(servers, token).last)
                    guard case .deviceChallenge(let challenge) = IncomingPush(json: pushed.body).notification else {
                        Issue.record("not a challenge: \(pushed.json ?? [:])")
                        return
                    }
                    let confirmed = try await client.post(
                        String(challenge.confirmURL.dropFirst("http://nds.test".count)),
                        json: String(decoding: try WireJSON.encode(DeviceConfirmation(code: challenge.code)), as: UTF8.self))
                    #expect(confirmed.status == .ok, "\(confirmed.text)")
                }
                let created = try await client.post(
                    "/api/v1/devices",
                    json: #"{"platform":"ios","push_token":"\#(firstToken)","live_activity":{"push_to_start_token":"\#(Self.startToken)"}}"#)
                #expect(created.status == .created)
                let device = try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: created.body))
                try await confirm(firstToken)
                let notify = "/api/v1/notify?token=\(device.alias)"
                #expect(try await client.post(notify, json: Self.swap("s-m", "transaction.mempool")).status == .ok)
                #expect(try await eventually { await Self.received(servers, Self.startToken).count == 1 })
                let path = "/api/v1/devices/\(device.deviceID)/live-activities/s-m"
                #expect(
                    try await client.call(.put, path, key: device.deviceSecret, json: #"{"push_token":"\#(Self.activityToken)"}"#).status
                        == .noContent)

                // The secret moves the device to a token not proven yet.
                let moved = try await client.call(
                    .put, "/api/v1/devices/\(device.deviceID)", key: device.deviceSecret, json: #"{"platform":"ios","push_token":"\#(movedToken)"}"#)
                #expect(moved.status == .ok && moved.json["confirmed"] as? Bool == false, "\(moved.text)")
                for status in ["transaction.confirmed", "transaction.claim.pending"] {
                    let refused = try await client.post(notify, json: Self.swap("s-m", status))
                    #expect(refused.status == .forbidden && refused.json["error"] as? String == "device_unconfirmed", "\(refused.text)")
                }
                // Whatever the refused calls enqueued is sent by now: the new token's challenge only.
                #expect(try await eventually { await Self.received(servers, movedToken).count == 1 })
                #expect(try await eventually { try await nds.store.counts().pending == 0 })
                #expect(await Self.received(servers, Self.activityToken).isEmpty)
                #expect(await Self.received(servers, Self.startToken).count == 1)

                try await confirm(movedToken)
                #expect(try await client.post(notify, json: Self.swap("s-m", "transaction.confirmed")).status == .ok)
                let update = try await Self.activityPushes(servers, count: 1)[0]
                #expect(try Self.aps(update)["event"] as? String == "update")
                #expect(((try Self.aps(update))["content-state"] as? [String: Any])?["status"] as? String == "transaction.confirmed")
            }
        }
    }
}
