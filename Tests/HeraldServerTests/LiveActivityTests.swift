import Foundation
import HTTPTypes
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
}
