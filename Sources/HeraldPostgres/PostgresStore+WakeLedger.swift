import Foundation
import HeraldStore
import HeraldWire
import PostgresNIO

extension PostgresStore: WakeLedgerStore {
    /// The one column list of a gateway entry: the device's six, the gateway row's seven, and
    /// whether the token is dead.
    static let wakeGatewayColumns = """
        SELECT \(deviceColumns),
               g.install_key, g.secret_sha256, g.encryption_key, g.envelope, g.environment, g.topics, g.registered_ts,
               \(deviceTokenIsDead)
        FROM wake_gateway_device g JOIN device d ON d.id = g.device_id
        """

    static func wakeGatewayEntry(from row: PostgresRow) throws -> WakeGatewayEntry? {
        guard let device = try device(from: row) else { return nil }
        let columns = row.makeRandomAccess()
        let topics = try columns[11].decode(String.self)
        let gateway = WakeGatewayDevice(
            installKey: try columns[6].decode(String.self), secretSHA256: try columns[7].decode(String.self),
            encryptionKey: try columns[8].decode(String.self), envelope: try columns[9].decode(Int.self),
            environment: try columns[10].decode(String.self),
            topics: topics.isEmpty ? [] : topics.split(separator: ",").map(String.init), registeredTS: try columns[12].decode(Int64.self))
        return WakeGatewayEntry(device: device, gateway: gateway, isDead: try columns[13].decode(Bool.self))
    }

    public func wakeGatewayDevice(secretSHA256: String) async throws -> WakeGatewayEntry? {
        try await rows(
            PostgresQuery(unsafeSQL: Self.wakeGatewayColumns + " WHERE g.secret_sha256 = $1 ORDER BY d.id LIMIT 1", binds: Self.binds(secretSHA256))
        )
        .first.flatMap(Self.wakeGatewayEntry(from:))
    }

    public func wakeGatewayDevice(installKey: String) async throws -> WakeGatewayEntry? {
        try await rows(
            PostgresQuery(unsafeSQL: Self.wakeGatewayColumns + " WHERE g.install_key = $1 ORDER BY d.id LIMIT 1", binds: Self.binds(installKey))
        )
        .first.flatMap(Self.wakeGatewayEntry(from:))
    }

    public func wakeGatewayDevices(identity: String) async throws -> [WakeGatewayEntry] {
        try await rows(
            PostgresQuery(
                unsafeSQL: Self.wakeGatewayColumns + " JOIN device_identity i ON i.device_id = d.id WHERE i.identity = $1 ORDER BY d.id",
                binds: Self.binds(identity))
        ).compactMap(Self.wakeGatewayEntry(from:))
    }

    public func setWakeGatewayTopics(deviceID: String, topics: [String], now: Date) async throws {
        try await rows(
            """
            WITH touched AS (UPDATE device SET updated_at = \(now.timeIntervalSince1970) WHERE id = \(deviceID))
            UPDATE wake_gateway_device SET topics = \(topics.joined(separator: ",")) WHERE device_id = \(deviceID)
            """)
    }

    public func recordWake(_ wake: WakeRecord, deliveries: [WakeDeliveryRecord]) async throws {
        try await rows(
            """
            WITH made AS (
                INSERT INTO wake (id, identity, topic, deadline, created_at)
                VALUES (\(wake.id), \(wake.identity), \(wake.topic), \(wake.deadline.timeIntervalSince1970), \(wake.createdAt.timeIntervalSince1970))
                ON CONFLICT (id) DO NOTHING
            )
            INSERT INTO wake_delivery (wake_id, device_id, job_id, fallback_job_id, present)
            SELECT \(wake.id), device, NULLIF(job, ''), NULLIF(fallback, ''), present
            FROM unnest(\(deliveries.map(\.deviceID))::text[], \(deliveries.map { $0.jobID ?? "" })::text[],
                        \(deliveries.map { $0.fallbackJobID ?? "" })::text[], \(deliveries.map(\.present))::boolean[])
                AS d (device, job, fallback, present)
            ON CONFLICT (wake_id, device_id) DO UPDATE SET job_id = excluded.job_id, fallback_job_id = excluded.fallback_job_id
            """)
    }

    static let wakeDeliveryColumns =
        "SELECT wake_id, device_id, job_id, fallback_job_id, present, outcome, acked_at, fallback_cancelled FROM wake_delivery"

    static func wakeDelivery(from row: PostgresRow) throws -> WakeDeliveryRecord {
        let (wakeID, deviceID, jobID, fallbackJobID, present, outcome, ackedAt, cancelled) = try row.decode(
            (String, String, String?, String?, Bool, String?, Double?, Bool).self)
        return WakeDeliveryRecord(
            wakeID: wakeID, deviceID: deviceID, jobID: jobID, fallbackJobID: fallbackJobID, present: present,
            outcome: outcome.flatMap(WakeAckOutcome.init(rawValue:)), ackedAt: ackedAt.map(Date.init(timeIntervalSince1970:)),
            fallbackCancelled: cancelled)
    }

    public func wake(id: String) async throws -> (WakeRecord, [WakeDeliveryRecord])? {
        guard let row = try await rows("SELECT id, identity, topic, deadline, created_at FROM wake WHERE id = \(id)").first else { return nil }
        let (wakeID, identity, topic, deadline, createdAt) = try row.decode((String, String, String, Double, Double).self)
        let deliveries = try await rows(
            PostgresQuery(unsafeSQL: Self.wakeDeliveryColumns + " WHERE wake_id = $1 ORDER BY device_id", binds: Self.binds(id))
        ).map(Self.wakeDelivery(from:))
        return (
            WakeRecord(
                id: wakeID, identity: identity, topic: topic, deadline: Date(timeIntervalSince1970: deadline),
                createdAt: Date(timeIntervalSince1970: createdAt)), deliveries
        )
    }

    public func acknowledgeWake(
        id: String, deviceID: String, outcome: WakeAckOutcome, now: Date, receivedGrace: TimeInterval
    ) async throws -> WakeDeliveryRecord? {
        let nowValue = now.timeIntervalSince1970
        return try await transaction { connection, logger -> WakeDeliveryRecord? in
            var query = PostgresQuery(unsafeSQL: Self.wakeDeliveryColumns + " WHERE wake_id = $1 AND device_id = $2 FOR UPDATE")
            query.binds.append(id)
            query.binds.append(deviceID)
            guard let row = try await connection.query(query, logger: logger).collect().first else { return nil }
            var delivery = try Self.wakeDelivery(from: row)
            // A later ack never undoes `handled`: the fallback it cancelled stays cancelled.
            guard delivery.outcome != .handled else { return delivery }
            // `received` says the app is at work; after another outcome it has nothing to add.
            guard outcome != .received || delivery.outcome == nil else { return delivery }
            delivery.outcome = outcome
            delivery.ackedAt = now
            if outcome == .received, let fallback = delivery.fallbackJobID {
                try await connection.query(
                    """
                    UPDATE job SET next_attempt_at = GREATEST(next_attempt_at, LEAST(\(nowValue + receivedGrace), expires_at - 1))
                    WHERE id = \(fallback) AND state = 'pending' AND (lease_until IS NULL OR lease_until < \(nowValue))
                    """, logger: logger)
            }
            if outcome == .handled, let fallback = delivery.fallbackJobID {
                let deleted = try await connection.query(
                    """
                    DELETE FROM job WHERE id = \(fallback) AND state = 'pending' AND (lease_until IS NULL OR lease_until < \(nowValue))
                    RETURNING id
                    """, logger: logger
                ).collect()
                delivery.fallbackCancelled = !deleted.isEmpty
            }
            try await connection.query(
                """
                UPDATE wake_delivery SET outcome = \(outcome.rawValue), acked_at = \(nowValue), fallback_cancelled = \(delivery.fallbackCancelled)
                WHERE wake_id = \(id) AND device_id = \(deviceID)
                """, logger: logger)
            return delivery
        }
    }

    public func sharedSecret(name: String, now: Date, make: @Sendable () -> Data) async throws -> Data {
        let candidate = make()
        let rows = try await rows(
            """
            WITH made AS (
                INSERT INTO shared_secret (name, value, created_at) VALUES (\(name), \(candidate), \(now.timeIntervalSince1970))
                ON CONFLICT (name) DO NOTHING RETURNING value
            )
            SELECT value FROM made UNION ALL SELECT value FROM shared_secret WHERE name = \(name)
            """)
        return try rows.first?.decode(Data.self) ?? candidate
    }
}
