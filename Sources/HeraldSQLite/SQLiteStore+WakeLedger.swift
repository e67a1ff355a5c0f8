import Foundation
import GRDB
import HeraldStore
import HeraldWire

extension SQLiteStore: WakeLedgerStore {
    /// The one column list of a gateway entry: the device's six, the gateway row's, and
    /// whether the token is dead.
    static let wakeGatewayColumns = """
        SELECT \(deviceColumns),
               g.install_key, g.secret_sha256, g.encryption_key, g.envelope, g.environment, g.topics, g.registered_ts,
               \(deviceTokenIsDead) AS dead
        FROM wake_gateway_device g JOIN device d ON d.id = g.device_id
        """

    static func wakeGatewayEntry(from row: Row) -> WakeGatewayEntry? {
        guard let device = device(from: row) else { return nil }
        let topics: String = row["topics"]
        let gateway = WakeGatewayDevice(
            installKey: row["install_key"], secretSHA256: row["secret_sha256"], encryptionKey: row["encryption_key"],
            envelope: row["envelope"], environment: row["environment"],
            topics: topics.isEmpty ? [] : topics.split(separator: ",").map(String.init), registeredTS: row["registered_ts"])
        return WakeGatewayEntry(device: device, gateway: gateway, isDead: row["dead"])
    }

    /// Inside a registration's transaction, after the install's earlier device went.
    static func insertWakeGatewayDevice(_ gateway: WakeGatewayDevice, deviceID: String, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO wake_gateway_device
                    (device_id, install_key, secret_sha256, encryption_key, envelope, environment, topics, registered_ts)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                deviceID, gateway.installKey, gateway.secretSHA256, gateway.encryptionKey, gateway.envelope, gateway.environment,
                gateway.topics.joined(separator: ","), gateway.registeredTS,
            ])
    }

    public func wakeGatewayDevice(secretSHA256: String) async throws -> WakeGatewayEntry? {
        try await database.read { db in
            try Row.fetchOne(db, sql: Self.wakeGatewayColumns + " WHERE g.secret_sha256 = ? ORDER BY d.id LIMIT 1", arguments: [secretSHA256])
                .flatMap(Self.wakeGatewayEntry(from:))
        }
    }

    public func wakeGatewayDevice(installKey: String) async throws -> WakeGatewayEntry? {
        try await database.read { db in
            try Row.fetchOne(db, sql: Self.wakeGatewayColumns + " WHERE g.install_key = ? ORDER BY d.id LIMIT 1", arguments: [installKey])
                .flatMap(Self.wakeGatewayEntry(from:))
        }
    }

    public func wakeGatewayDevices(identity: String) async throws -> [WakeGatewayEntry] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: Self.wakeGatewayColumns + " JOIN device_identity i ON i.device_id = d.id WHERE i.identity = ? ORDER BY d.id",
                arguments: [identity]
            ).compactMap(Self.wakeGatewayEntry(from:))
        }
    }

    public func setWakeGatewayTopics(deviceID: String, topics: [String], now: Date) async throws {
        try await database.write { db in
            try db.execute(
                sql: "UPDATE wake_gateway_device SET topics = ? WHERE device_id = ?", arguments: [topics.joined(separator: ","), deviceID])
            try db.execute(sql: "UPDATE device SET updated_at = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, deviceID])
        }
    }

    public func recordWake(_ wake: WakeRecord, deliveries: [WakeDeliveryRecord]) async throws {
        try await database.write { db in
            try db.execute(
                sql: "INSERT INTO wake (id, identity, topic, deadline, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                arguments: [wake.id, wake.identity, wake.topic, wake.deadline.timeIntervalSince1970, wake.createdAt.timeIntervalSince1970])
            for delivery in deliveries {
                try db.execute(
                    sql: """
                        INSERT INTO wake_delivery (wake_id, device_id, job_id, fallback_job_id, present, outcome, acked_at, fallback_cancelled)
                        VALUES (?, ?, ?, ?, ?, NULL, NULL, 0)
                        ON CONFLICT (wake_id, device_id) DO UPDATE SET job_id = excluded.job_id, fallback_job_id = excluded.fallback_job_id
                        """,
                    arguments: [wake.id, delivery.deviceID, delivery.jobID, delivery.fallbackJobID, delivery.present])
            }
        }
    }

    static let wakeDeliveryColumns =
        "SELECT wake_id, device_id, job_id, fallback_job_id, present, outcome, acked_at, fallback_cancelled FROM wake_delivery"

    static func wakeDelivery(from row: Row) -> WakeDeliveryRecord {
        WakeDeliveryRecord(
            wakeID: row["wake_id"], deviceID: row["device_id"], jobID: row["job_id"], fallbackJobID: row["fallback_job_id"],
            present: row["present"], outcome: (row["outcome"] as String?).flatMap(WakeAckOutcome.init(rawValue:)),
            ackedAt: (row["acked_at"] as Double?).map(Date.init(timeIntervalSince1970:)), fallbackCancelled: row["fallback_cancelled"])
    }

    public func wake(id: String) async throws -> (WakeRecord, [WakeDeliveryRecord])? {
        try await database.read { db -> (WakeRecord, [WakeDeliveryRecord])? in
            guard let row = try Row.fetchOne(db, sql: "SELECT id, identity, topic, deadline, created_at FROM wake WHERE id = ?", arguments: [id])
            else { return nil }
            let wake = WakeRecord(
                id: row["id"], identity: row["identity"], topic: row["topic"], deadline: Date(timeIntervalSince1970: row["deadline"]),
                createdAt: Date(timeIntervalSince1970: row["created_at"]))
            let deliveries = try Row.fetchAll(db, sql: Self.wakeDeliveryColumns + " WHERE wake_id = ? ORDER BY device_id", arguments: [id])
                .map(Self.wakeDelivery(from:))
            return (wake, deliveries)
        }
    }

    public func acknowledgeWake(
        id: String, deviceID: String, outcome: WakeAckOutcome, now: Date, receivedGrace: TimeInterval
    ) async throws -> WakeDeliveryRecord? {
        let nowValue = now.timeIntervalSince1970
        return try await database.write { db -> WakeDeliveryRecord? in
            guard
                let row = try Row.fetchOne(
                    db, sql: Self.wakeDeliveryColumns + " WHERE wake_id = ? AND device_id = ?", arguments: [id, deviceID])
            else { return nil }
            var delivery = Self.wakeDelivery(from: row)
            // A later ack never undoes `handled`: the fallback it cancelled stays cancelled.
            guard delivery.outcome != .handled else { return delivery }
            // `received` says the app is at work; after another outcome it has nothing to add.
            guard outcome != .received || delivery.outcome == nil else { return delivery }
            delivery.outcome = outcome
            delivery.ackedAt = now
            if outcome == .received, let fallback = delivery.fallbackJobID {
                try db.execute(
                    sql: """
                        UPDATE job SET next_attempt_at = MAX(next_attempt_at, MIN(?, expires_at - 1))
                        WHERE id = ? AND state = 'pending' AND (lease_until IS NULL OR lease_until < ?)
                        """,
                    arguments: [nowValue + receivedGrace, fallback, nowValue])
            }
            if outcome == .handled, let fallback = delivery.fallbackJobID {
                try db.execute(
                    sql: "DELETE FROM job WHERE id = ? AND state = 'pending' AND (lease_until IS NULL OR lease_until < ?)",
                    arguments: [fallback, nowValue])
                delivery.fallbackCancelled = db.changesCount > 0
            }
            try db.execute(
                sql: "UPDATE wake_delivery SET outcome = ?, acked_at = ?, fallback_cancelled = ? WHERE wake_id = ? AND device_id = ?",
                arguments: [outcome.rawValue, nowValue, delivery.fallbackCancelled, id, deviceID])
            return delivery
        }
    }

    public func sharedSecret(name: String, now: Date, make: @Sendable () -> Data) async throws -> Data {
        let candidate = make()
        return try await database.write { db -> Data in
            try db.execute(
                sql: "INSERT INTO shared_secret (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
                arguments: [name, candidate, now.timeIntervalSince1970])
            return try Data.fetchOne(db, sql: "SELECT value FROM shared_secret WHERE name = ?", arguments: [name]) ?? candidate
        }
    }
}
