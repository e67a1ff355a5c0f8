import Foundation
import HeraldStore
import HeraldWire
import PostgresNIO

extension PostgresStore: DeviceStore {
    /// One statement, so one transaction: the device and what came with it, or nothing.
    public func registerDevice(
        platform: Platform, token: String, sealKey: SealPublicKey?, app: String, extras: DeviceExtras, now: Date
    ) async throws -> DeviceRegistration {
        let registration = DeviceRegistration.make(platform: platform, token: token, sealKey: sealKey, app: app)
        let (device, secret) = (registration.device, registration.secret)
        let nowValue = now.timeIntervalSince1970
        let identities = Array(Set(extras.identities))
        let insert: PostgresQuery = try """
        WITH made AS (
            INSERT INTO device (id, platform, token, alias, secret_hash, seal_key, created_at, updated_at, app)
            VALUES (\(device.id), \(platform.rawValue), \(token), \(device.alias), \(Secrets.hash(secret)),
                    \(sealKey?.base64), \(nowValue), \(nowValue), \(app))
            RETURNING id
        ), lsp AS (
            INSERT INTO lsps5_lsp (device_id, node_id, updated_at)
            SELECT id, \(extras.lspNodeID)::text, \(nowValue) FROM made WHERE \(extras.lspNodeID)::text IS NOT NULL
        ), proven AS (
            INSERT INTO device_identity (identity, device_id, created_at)
            SELECT identity, made.id, \(nowValue) FROM made, unnest(\(identities)::text[]) AS identity
        )
        INSERT INTO device_challenge (device_id, code_hash, created_at, confirmed_at)
        SELECT id, \(extras.challengeHash)::bytea, \(nowValue), NULL FROM made WHERE \(extras.challengeHash)::bytea IS NOT NULL
        """
        guard let gateway = extras.wakeGateway else {
            try await rows(insert)
            return registration
        }
        // A gateway registration replaces its install's earlier device, if it may: in one
        // transaction, under a lock on the install, so concurrent registrations of one install
        // settle on one and the check holds for the write.
        try await transaction { connection, logger in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(gateway.installKey), 7))", logger: logger)
            var held: [(id: String, secret: String)] = []
            for try await (id, secret) in try await connection.query(
                "SELECT device_id, secret_sha256 FROM wake_gateway_device WHERE install_key = \(gateway.installKey)", logger: logger
            ).decode((String, String).self) {
                held.append((id, secret))
            }
            let earlier = held.map(\.id)
            if !held.isEmpty, !held.contains(where: { $0.secret == gateway.presentedSecretSHA256 }) {
                var proven = false
                for try await _ in try await connection.query(
                    """
                    SELECT 1 FROM device_identity
                    WHERE device_id = ANY(\(earlier)::text[]) AND identity = ANY(\(identities)::text[]) LIMIT 1
                    """, logger: logger)
                {
                    proven = true
                }
                guard proven else { throw WakeGatewayInstallTaken() }
            }
            try await connection.query(insert, logger: logger)
            if !earlier.isEmpty {
                // The earlier devices' wakes pass to this one (an ack from it still cancels their
                // fallbacks), their pending fallbacks go to its token on the same platform, and they go.
                try await connection.query(
                    "UPDATE wake_delivery SET device_id = \(device.id) WHERE device_id = ANY(\(earlier)::text[])", logger: logger)
                try await connection.query(
                    """
                    UPDATE job SET token = \(token)
                    WHERE platform = \(platform.rawValue) AND state = 'pending' AND (lease_until IS NULL OR lease_until < \(nowValue))
                      AND id IN (SELECT fallback_job_id FROM wake_delivery WHERE device_id = \(device.id) AND fallback_job_id IS NOT NULL)
                    """, logger: logger)
                try await connection.query("DELETE FROM device WHERE id = ANY(\(earlier)::text[])", logger: logger)
            }
            try await connection.query(
                """
                INSERT INTO wake_gateway_device
                    (device_id, install_key, secret_sha256, encryption_key, envelope, environment, topics, registered_ts)
                VALUES (\(device.id), \(gateway.installKey), \(gateway.secretSHA256), \(gateway.encryptionKey), \(gateway.envelope),
                        \(gateway.environment), \(gateway.topics.joined(separator: ",")), \(gateway.registeredTS))
                """, logger: logger)
        }
        return registration
    }

    /// The one column list of a ``Device``, of `device` named `d`: every query that makes one
    /// selects these first, and ``device(from:)`` reads them by position.
    static let deviceColumns = "d.id, d.platform, d.token, d.alias, d.seal_key, d.app"
    /// Whether the push token of the device `d` is marked dead, as a column.
    static let deviceTokenIsDead = "EXISTS (SELECT 1 FROM dead_token t WHERE t.platform = d.platform AND t.token = d.token)"

    public func device(alias: String) async throws -> Device? {
        try await rows("SELECT \(unescaped: Self.deviceColumns) FROM device d WHERE d.alias = \(alias)")
            .first.flatMap(Self.device(from:))
    }

    public func device(id: String, secret: String) async throws -> Device? {
        guard
            let row = try await rows(
                "SELECT \(unescaped: Self.deviceColumns), d.secret_hash FROM device d WHERE d.id = \(id)"
            ).first,
            let device = try Self.device(from: row)
        else { return nil }
        let hash = try row.makeRandomAccess()[6].decode(Data.self)
        return Secrets.constantTimeEqual(hash, Secrets.hash(secret)) ? device : nil
    }

    /// A device from a row whose first columns are ``deviceColumns``.
    static func device(from row: PostgresRow) throws -> Device? {
        let columns = row.makeRandomAccess()
        let platform = try columns[1].decode(String.self)
        guard let platform = Platform(rawValue: platform) else { return nil }
        // A key that no longer parses (never stored by this code) counts as none rather than
        // losing the device.
        let sealKey = try columns[4].decode(String?.self).flatMap { try? SealPublicKey(base64: $0) }
        return Device(
            id: try columns[0].decode(String.self), platform: platform,
            token: try columns[2].decode(String.self),
            alias: try columns[3].decode(String.self), sealKey: sealKey,
            app: try columns[5].decode(String.self)
        )
    }

    /// One transaction of as many statements as there are changes, then the two reads.
    public func updateDevice(id: String, changes: DeviceChanges, now date: Date) async throws -> UpdatedDevice {
        let now = date.timeIntervalSince1970
        return try await transaction { connection, logger in
            if case .set(let push) = changes.pushToken {
                try await connection.query(
                    "UPDATE device SET platform = \(push.platform.rawValue), token = \(push.token), updated_at = \(now) WHERE id = \(id)",
                    logger: logger)
            }
            if case .set(let hash) = changes.challengeHash {
                try await connection.query(try Self.setChallenge(deviceID: id, codeHash: hash, now: now), logger: logger)
            }
            if case .set(let sealKey) = changes.sealKey {
                try await connection.query(
                    "UPDATE device SET seal_key = \(sealKey?.base64), updated_at = \(now) WHERE id = \(id)", logger: logger)
            }
            if case .set(let node) = changes.lspNodeID {
                try await connection.query(Self.setLSPNodeID(deviceID: id, nodeID: node, now: now), logger: logger)
            }
            if case .set(let identities) = changes.identities {
                try await connection.query(Self.setIdentities(deviceID: id, identities: identities, now: now), logger: logger)
            }
            let node = try await connection.query(Self.lspNodeID(deviceID: id), logger: logger).collect().first?.decode(String.self)
            let identities = try await connection.query(Self.identities(deviceID: id), logger: logger).collect()
                .map { try $0.decode(String.self) }
            return UpdatedDevice(lspNodeID: node, identities: identities)
        }
    }

    public func deleteDevice(id: String, now date: Date) async throws {
        let now = date.timeIntervalSince1970
        try await rows(
            """
            WITH gone AS (DELETE FROM device WHERE id = \(id) RETURNING alias),
            fallbacks AS (
                DELETE FROM job WHERE state = 'pending' AND (lease_until IS NULL OR lease_until < \(now))
                  AND id IN (SELECT fallback_job_id FROM wake_delivery WHERE device_id = \(id) AND fallback_job_id IS NOT NULL)
            )
            INSERT INTO deleted_alias (alias, deleted_at) SELECT alias, \(now) FROM gone ON CONFLICT DO NOTHING
            """)
    }

    /// Read through on every call: another instance may register, move or kill a token at any
    /// moment, and a cache here would need invalidating across processes.
    public func resolveWebhookToken(
        _ token: String, rawPlatform: Platform?
    ) async throws
        -> WebhookTokenResolution
    {
        // A token no alias can have (a raw APNs or FCM token) needs only the dead-token check.
        guard DeviceAlias.couldBeAlias(token) else {
            guard let rawPlatform else { return WebhookTokenResolution(device: nil, isDead: false) }
            let key = DeadTokenKey(platform: rawPlatform.rawValue, token: token)
            let dead = try await deadTokenChecks.answer(key) { keys in try await self.deadTokens(among: keys) }
            return WebhookTokenResolution(device: nil, isDead: dead)
        }
        guard let row = try await rows(ResolveAliasStatement(token: token, rawPlatform: rawPlatform?.rawValue)).first else {
            return WebhookTokenResolution(device: nil, isDead: false)
        }
        let columns = row.makeRandomAccess()
        let device = try columns[0].decode(String?.self) == nil ? nil : try Self.device(from: row)
        if try columns[7].decode(Bool.self) { return WebhookTokenResolution(device: nil, isDead: false, isDeletedAlias: true) }
        return WebhookTokenResolution(device: device, isDead: try columns[6].decode(Bool.self))
    }

    /// One round trip: the alias's device, if any, whether the token it leads to is dead, and
    /// whether the token is the alias of a device deleted since. Prepared: every webhook to an
    /// alias runs it.
    struct ResolveAliasStatement: PostgresPreparedStatement {
        static let sql = """
            SELECT \(PostgresStore.deviceColumns),
                   EXISTS (SELECT 1 FROM dead_token t
                           WHERE t.platform = coalesce(d.platform, $2) AND t.token = coalesce(d.token, $1)),
                   d.id IS NULL AND EXISTS (SELECT 1 FROM deleted_alias a WHERE a.alias = $1)
            FROM (SELECT 1) AS one LEFT JOIN device d ON d.alias = $1
            """
        static let bindingDataTypes: [PostgresDataType] = [.text, .text]
        var token: String
        var rawPlatform: String?

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(token)
            bindings.append(rawPlatform)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }

    /// Which of `keys` are dead, in one statement: a webhook's raw token, or a batch of them.
    func deadTokens(among keys: [DeadTokenKey]) async throws -> [DeadTokenKey: Bool] {
        let dead = try await rows(DeadTokensStatement(platforms: keys.map(\.platform), tokens: keys.map(\.token)))
        return Dictionary(dead.map { ($0, true) }, uniquingKeysWith: { first, _ in first })
    }

    /// The dead ones among the tokens given. Prepared: every raw-token webhook, or batch of them, runs it.
    struct DeadTokensStatement: PostgresPreparedStatement {
        static let sql = """
            SELECT d.platform, d.token FROM dead_token d
            JOIN unnest($1::text[], $2::text[]) AS k(platform, token) ON d.platform = k.platform AND d.token = k.token
            """
        static let bindingDataTypes: [PostgresDataType] = [.textArray, .textArray]
        var platforms: [String]
        var tokens: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(platforms)
            bindings.append(tokens)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> DeadTokenKey {
            let (platform, token) = try row.decode((String, String).self)
            return DeadTokenKey(platform: platform, token: token)
        }
    }
}

extension PostgresStore: DeviceLookupStore {
    public func resolveDevice(id: String) async throws -> WebhookTokenResolution? {
        let rows = try await rows(
            """
            SELECT \(unescaped: Self.deviceColumns), \(unescaped: Self.deviceTokenIsDead) FROM device d WHERE d.id = \(id)
            """
        )
        guard let row = rows.first, let device = try Self.device(from: row) else { return nil }
        return WebhookTokenResolution(
            device: device, isDead: try row.makeRandomAccess()[6].decode(Bool.self))
    }
}

extension PostgresStore: LocalPushStore {
    public func feedOwner(platform: Platform, token: String) async throws -> String? {
        try await rows(
            "SELECT id FROM device WHERE platform = \(platform.rawValue) AND token = \(token) ORDER BY created_at, id LIMIT 1"
        ).first?.decode(String.self)
    }

    public func localPushes(
        platform: Platform, token: String, after: Int64, limit: Int
    ) async throws
        -> [LocalPush]
    {
        let rows = try await rows(
            """
            SELECT seq, platform, payload, created_at FROM local_push
            WHERE platform = \(platform.rawValue) AND token = \(token) AND seq > \(after) ORDER BY seq LIMIT \(limit)
            """
        )
        return try rows.compactMap { row in
            let (seq, platform, payload, createdAt) = try row.decode((Int64, String, Data, Double).self)
            guard let platform = Platform(rawValue: platform) else { return nil }
            return LocalPush(
                seq: seq, platform: platform, payload: payload, createdAt: PostgresRow.date(createdAt))
        }
    }
}

/// A raw token on its platform, as `dead_token` keys it.
struct DeadTokenKey: Hashable, Sendable {
    var platform: String
    var token: String
}
