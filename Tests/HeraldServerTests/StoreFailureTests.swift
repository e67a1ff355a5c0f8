import Foundation
import GRDB
import HeraldStore
import Hummingbird
import HummingbirdTesting
import Testing

/// The database fails under a running server, for real: a second connection to the same file
/// makes SQLite refuse the server's statements.
@Suite("Store failures answer 503 store_unavailable")
struct StoreFailureTests {
    static let swap = #"{"event":"swap.update","data":{"id":"s-1","status":"transaction.mempool"}}"#

    /// A second connection to the NDS's database file, as another process would open it.
    static func sabotage(_ nds: TestNDS, _ sql: String) async throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)  // the server may be writing at that moment
        let queue = try DatabaseQueue(path: nds.store.path, configuration: configuration)
        try await queue.write { db in try db.execute(sql: sql) }
    }

    static func expectStoreUnavailable(_ response: TestResponse, _ comment: Comment? = nil) {
        #expect(response.status == .serviceUnavailable, comment)
        #expect(response.json["error"] as? String == "store_unavailable", comment)
        #expect(response.headers[.retryAfter] == "1", comment)
    }

    @Test("writes the database refuses are 503 on the webhook, device and reply routes, and nothing is stored")
    func refusedWrites() async throws {
        let nds = try TestNDS()
        let reply = try await nds.store.createReply(kind: "invoice_request", now: Date(), expiresAt: Date().addingTimeInterval(60))
        try await nds.app().test(.router) { client in
            let created = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"6265666f7265"}"#)
            #expect(created.status == .created)
            let id = try #require(created.json["device_id"] as? String)
            let secret = try #require(created.json["device_secret"] as? String)

            // What a full disk or an I/O error looks like to the server: every write fails.
            try await Self.sabotage(
                nds,
                ["job", "device", "pending_reply"].map { table in
                    """
                    CREATE TRIGGER refuse_insert_\(table) BEFORE INSERT ON \(table)
                    BEGIN SELECT RAISE(ABORT, 'simulated write failure'); END;
                    CREATE TRIGGER refuse_update_\(table) BEFORE UPDATE ON \(table)
                    BEGIN SELECT RAISE(ABORT, 'simulated write failure'); END;
                    """
                }.joined(separator: "\n")
            )

            let webhook = try await client.post("/api/v1/notify?platform=ios&token=abc123", json: Self.swap)
            Self.expectStoreUnavailable(webhook, "webhook")
            let register = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"6166746572"}"#)
            Self.expectStoreUnavailable(register, "device registration")
            let update = try await client.execute(
                uri: "/api/v1/devices/\(id)", method: .put,
                headers: [.contentType: "application/json", .authorization: "Bearer \(secret)"],
                body: ByteBuffer(string: #"{"push_token":"726f7461746564"}"#)
            )
            Self.expectStoreUnavailable(update, "token rotation")
            let answer = try await client.post("/api/v1/reply/\(reply)", json: #"{"invoice":"lni1"}"#)
            Self.expectStoreUnavailable(answer, "reply")

            #expect(try await nds.store.counts() == QueueCounts(pending: 0, delivered: 0, dead: 0))
            #expect(try await nds.store.device(id: id, secret: secret)?.token == "6265666f7265")
        }
    }

    @Test("reads the database fails are 503 on the webhook, device and Lightning-address routes")
    func failedReads() async throws {
        let nds = try TestNDS(acceptRawTokens: false)
        try await nds.app().test(.router) { client in
            let created = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"74"}"#)
            let id = try #require(created.json["device_id"] as? String)
            let secret = try #require(created.json["device_secret"] as? String)
            let alias = try #require(created.json["alias"] as? String)
            let claimed = try await client.post(
                "/api/v1/lnurlpay", json: #"{"device_id":"\#(id)","username":"alice"}"#,
                headers: [.authorization: "Bearer \(secret)"]
            )
            #expect(claimed.status == .created)

            try await Self.sabotage(nds, "DROP TABLE lightning_address; DROP TABLE device")

            let webhook = try await client.post("/api/v1/notify?platform=ios&token=\(alias)", json: Self.swap)
            Self.expectStoreUnavailable(webhook, "webhook to an alias")
            let delete = try await client.execute(
                uri: "/api/v1/devices/\(id)", method: .delete, headers: [.authorization: "Bearer \(secret)"]
            )
            Self.expectStoreUnavailable(delete, "device deletion")

            // LNURL wallets read status and reason; Herald's code and Retry-After come along.
            let lnurlp = try await client.execute(uri: "/.well-known/lnurlp/alice", method: .get)
            Self.expectStoreUnavailable(lnurlp, "lnurlp")
            #expect(lnurlp.json["status"] as? String == "ERROR")
        }
    }

    @Test("the wake ledger's failures are 503 on wakes, acks and wake status, mapped by the error middleware alone")
    func wakeLedger() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake])
        let device = try await nds.store.registerDevice(platform: .ios, token: String(repeating: "5e", count: 32), now: Date())
        try await nds.app().test(.live) { client in
            let wake = #"{"device":"\#(device.device.id)","kind":"incomingHtlc","payment_hash":"\#(String(repeating: "0a", count: 32))"}"#
            let first = try await client.call(.post, "/api/v1/wake", key: key, json: wake)
            #expect(first.status == .accepted)
            let wakeID = try #require(first.json["wake_id"] as? String)

            try await Self.sabotage(nds, "DROP TABLE wake_delivery")

            let again = try await client.call(
                .post, "/api/v1/wake", key: key, json: wake.replacingOccurrences(of: "0a0a", with: "0b0b"))
            Self.expectStoreUnavailable(again, "wake")
            let ack = try await client.call(
                .post, "/api/v1/devices/\(device.device.id)/acks", key: device.secret, json: #"{"id":"\#(wakeID)","outcome":"handled"}"#)
            Self.expectStoreUnavailable(ack, "ack")
            let status = try await client.call(.get, "/api/v1/wake/\(wakeID)", key: key)
            Self.expectStoreUnavailable(status, "wake status")
        }
    }
}
