import Foundation
import GRDB
import HeraldStore
import HeraldWire

extension SQLiteStore: DeviceStore {
    public func registerDevice(
        platform: Platform, token: String, sealKey: SealPublicKey?, app: String, extras: DeviceExtras, now: Date
    ) async throws -> DeviceRegistration {
        let registration = DeviceRegistration.make(platform: platform, token: token, sealKey: sealKey, app: app)
        let (device, secret) = (registration.device, registration.secret)
        let nowValue = now.timeIntervalSince1970
        try await database.write { db in
            // The install's earlier registration: replaced only by its owner (read in this
            // transaction, so concurrent registrations of one install settle on one).
            let earlier = try extras.wakeGateway.map { try Self.claimInstall($0, identities: extras.identities, in: db) } ?? []
            try db.execute(
                sql: """
                    INSERT INTO device (id, platform, token, alias, secret_hash, seal_key, created_at, updated_at, app)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    device.id, platform.rawValue, token, device.alias, Secrets.hash(secret), sealKey?.base64, nowValue,
                    nowValue, app,
                ]
            )
            if let node = extras.lspNodeID { try Self.setLSPNodeID(deviceID: device.id, nodeID: node, now: nowValue, in: db) }
            if !extras.identities.isEmpty {
                try Self.setIdentities(deviceID: device.id, identities: extras.identities, now: nowValue, in: db)
            }
            if let hash = extras.challengeHash { try Self.setChallenge(deviceID: device.id, codeHash: hash, now: nowValue, in: db) }
            if let gateway = extras.wakeGateway {
                try Self.handOver(from: earlier, to: device, now: nowValue, in: db)
                try Self.insertWakeGatewayDevice(gateway, deviceID: device.id, in: db)
            }
        }
        return registration
    }

    /// The devices holding the install now, if this registration may replace them: it proves one
    /// of their identities or presents the install's secret. Throws ``WakeGatewayInstallTaken``.
    static func claimInstall(_ gateway: WakeGatewayDevice, identities: [String], in db: Database) throws -> [String] {
        let held = try Row.fetchAll(
            db, sql: "SELECT device_id, secret_sha256 FROM wake_gateway_device WHERE install_key = ?", arguments: [gateway.installKey])
        guard !held.isEmpty else { return [] }
        let ids: [String] = held.map { $0["device_id"] }
        if let presented = gateway.presentedSecretSHA256, held.contains(where: { ($0["secret_sha256"] as String) == presented }) {
            return ids
        }
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ",")
        let proven = try String.fetchAll(
            db, sql: "SELECT identity FROM device_identity WHERE device_id IN (\(marks))", arguments: StatementArguments(ids))
        guard !Set(proven).isDisjoint(with: identities) else { throw WakeGatewayInstallTaken() }
        return ids
    }

    /// The earlier devices' wakes pass to `device` (an ack from it still cancels their fallbacks),
    /// their pending fallbacks go to its token (on the same platform: the alert is rendered for
    /// it), and the earlier devices go.
    static func handOver(from earlier: [String], to device: Device, now: TimeInterval, in db: Database) throws {
        guard !earlier.isEmpty else { return }
        let marks = Array(repeating: "?", count: earlier.count).joined(separator: ",")
        try db.execute(
            sql: "UPDATE wake_delivery SET device_id = ? WHERE device_id IN (\(marks))", arguments: StatementArguments([device.id] + earlier))
        try db.execute(
            sql: """
                UPDATE job SET token = ?
                WHERE platform = ? AND state = 'pending' AND (lease_until IS NULL OR lease_until < ?)
                  AND id IN (SELECT fallback_job_id FROM wake_delivery WHERE device_id = ? AND fallback_job_id IS NOT NULL)
                """,
            arguments: [device.token, device.platform.rawValue, now, device.id])
        try db.execute(sql: "DELETE FROM device WHERE id IN (\(marks))", arguments: StatementArguments(earlier))
    }

    /// The one column list of a ``Device``, of `device` named `d`: every query that makes one
    /// selects these, and ``device(from:)`` reads them by name.
    static let deviceColumns = "d.id, d.platform, d.token, d.alias, d.seal_key, d.app"
    /// Whether the push token of the device `d` is marked dead, as a column.
    static let deviceTokenIsDead = "EXISTS (SELECT 1 FROM dead_token t WHERE t.platform = d.platform AND t.token = d.token)"
    /// The device of an alias (every webhook to an alias runs it: kept whole, not rebuilt per call).
    static let deviceByAlias = "SELECT \(deviceColumns) FROM device d WHERE d.alias = ?"

    public func device(alias: String) async throws -> Device? {
        try await database.read { db in
            try Row.fetchOne(db, sql: Self.deviceByAlias, arguments: [alias]).flatMap(Self.device(from:))
        }
    }

    public func device(id: String, secret: String) async throws -> Device? {
        // Decoded inside the read: a `Row` is not `Sendable`, and a closure returning one once
        // made the compiler pick GRDB's blocking overload here (the hang under load).
        let found: (device: Device, secretHash: Data)? = try await database.read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT \(Self.deviceColumns), d.secret_hash FROM device d WHERE d.id = ?",
                    arguments: [id]
                ), let device = Self.device(from: row)
            else { return nil }
            return (device, row["secret_hash"])
        }
        guard let found, Secrets.constantTimeEqual(found.secretHash, Secrets.hash(secret)) else { return nil }
        return found.device
    }

    static func device(from row: Row) -> Device? {
        guard let platform = Platform(rawValue: row["platform"]) else { return nil }
        // A key that no longer parses (never stored by this code) is treated as none rather than
        // losing the device.
        let sealKey = (row["seal_key"] as String?).flatMap { try? SealPublicKey(base64: $0) }
        return Device(
            id: row["id"], platform: platform, token: row["token"], alias: row["alias"], sealKey: sealKey, app: row["app"])
    }

    public func updateDevice(id: String, changes: DeviceChanges, now: Date) async throws -> UpdatedDevice {
        let nowValue = now.timeIntervalSince1970
        return try await database.write { db in
            if case .set(let push) = changes.pushToken {
                try db.execute(
                    sql: "UPDATE device SET platform = ?, token = ?, updated_at = ? WHERE id = ?",
                    arguments: [push.platform.rawValue, push.token, nowValue, id])
            }
            if case .set(let hash) = changes.challengeHash {
                try Self.setChallenge(deviceID: id, codeHash: hash, now: nowValue, in: db)
            }
            if case .set(let sealKey) = changes.sealKey {
                try db.execute(
                    sql: "UPDATE device SET seal_key = ?, updated_at = ? WHERE id = ?", arguments: [sealKey?.base64, nowValue, id])
            }
            if case .set(let node) = changes.lspNodeID { try Self.setLSPNodeID(deviceID: id, nodeID: node, now: nowValue, in: db) }
            if case .set(let identities) = changes.identities {
                try Self.setIdentities(deviceID: id, identities: identities, now: nowValue, in: db)
            }
            return UpdatedDevice(
                lspNodeID: try Self.lspNodeID(deviceID: id, in: db), identities: try Self.identities(deviceID: id, in: db))
        }
    }

    public func resolveWebhookToken(_ token: String, rawPlatform: Platform?) async throws -> WebhookTokenResolution {
        let key = TokenResolutionCache.Key(token: token, rawPlatform: rawPlatform)
        let (cached, generation) = tokenCache.lookup(key)
        if let cached { return cached }
        // A raw token never marked dead: known without a read (nearly every webhook's case).
        if let rawPlatform, !DeviceAlias.couldBeAlias(token), !deadTokens.mightContain(platform: rawPlatform, token: token) {
            return WebhookTokenResolution(device: nil, isDead: false)
        }
        // `unsafeRead`: no transaction around two indexed lookups (they showed up as a third of
        // the lookup's cost); an answer one commit old is what the cache would give anyway.
        let resolution = try await database.unsafeRead { db in
            try Self.readWebhookToken(token, rawPlatform: rawPlatform, in: db)
        }
        tokenCache.store(resolution, for: key, generation: generation)
        return resolution
    }

    private static func readWebhookToken(
        _ token: String, rawPlatform: Platform?, in db: Database
    ) throws -> WebhookTokenResolution {
        // Cached statements: this runs for every webhook, and parsing SQL each time shows up.
        // A token no alias can have (a raw APNs or FCM token) skips both alias lookups.
        var device: Device?
        if DeviceAlias.couldBeAlias(token) {
            let deviceStatement = try db.cachedStatement(sql: deviceByAlias)
            device = try Row.fetchOne(deviceStatement, arguments: [token]).flatMap(Self.device(from:))
            // The alias of a device deleted since, of either form. (Whether an unknown token is an
            // alias or a raw token is the webhook's to decide, by its form.)
            if device == nil {
                let deleted = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM deleted_alias WHERE alias = ?)")
                if try Bool.fetchOne(deleted, arguments: [token]) ?? false {
                    return WebhookTokenResolution(device: nil, isDead: false, isDeletedAlias: true)
                }
            }
        }
        let platform = device?.platform ?? rawPlatform
        guard let platform else { return WebhookTokenResolution(device: device, isDead: false) }
        let deadStatement = try db.cachedStatement(
            sql: "SELECT EXISTS (SELECT 1 FROM dead_token WHERE platform = ? AND token = ?)"
        )
        let dead = try Bool.fetchOne(deadStatement, arguments: [platform.rawValue, device?.token ?? token]) ?? false
        return WebhookTokenResolution(device: device, isDead: dead)
    }

    public func deleteDevice(id: String, now: Date) async throws {
        try await database.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO deleted_alias (alias, deleted_at) SELECT alias, ? FROM device WHERE id = ?",
                arguments: [now.timeIntervalSince1970, id])
            try db.execute(
                sql: """
                    DELETE FROM job WHERE state = 'pending' AND (lease_until IS NULL OR lease_until < ?)
                      AND id IN (SELECT fallback_job_id FROM wake_delivery WHERE device_id = ? AND fallback_job_id IS NOT NULL)
                    """,
                arguments: [now.timeIntervalSince1970, id])
            try db.execute(sql: "DELETE FROM device WHERE id = ?", arguments: [id])
        }
    }
}

extension SQLiteStore: DeviceLookupStore {
    static let deviceByID = "SELECT \(deviceColumns) FROM device d WHERE d.id = ?"

    public func resolveDevice(id: String) async throws -> WebhookTokenResolution? {
        try await database.unsafeRead { db in
            let statement = try db.cachedStatement(sql: Self.deviceByID)
            guard let device = try Row.fetchOne(statement, arguments: [id]).flatMap(Self.device(from:)) else { return nil }
            let dead =
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM dead_token WHERE platform = ? AND token = ?)"),
                    arguments: [device.platform.rawValue, device.token]
                ) ?? false
            return WebhookTokenResolution(device: device, isDead: dead)
        }
    }
}

// MARK: - Local development pushes

extension SQLiteStore: LocalPushStore {
    public func feedOwner(platform: Platform, token: String) async throws -> String? {
        try await database.read { db in
            try String.fetchOne(
                db, sql: "SELECT id FROM device WHERE platform = ? AND token = ? ORDER BY created_at, id LIMIT 1",
                arguments: [platform.rawValue, token])
        }
    }

    public func localPushes(platform: Platform, token: String, after: Int64, limit: Int) async throws -> [LocalPush] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, platform, payload, created_at FROM local_push
                    WHERE platform = ? AND token = ? AND seq > ? ORDER BY seq LIMIT ?
                    """,
                arguments: [platform.rawValue, token, after, limit]
            ).compactMap { row in
                guard let platform = Platform(rawValue: row["platform"]) else { return nil }
                return LocalPush(
                    seq: row["seq"],
                    platform: platform,
                    payload: row["payload"],
                    createdAt: Date(timeIntervalSince1970: row["created_at"])
                )
            }
        }
    }
}
