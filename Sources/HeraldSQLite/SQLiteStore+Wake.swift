import HeraldStore
import Foundation
import GRDB

extension SQLiteStore: DeviceLookupStore {
    public func resolveDevice(id: String) async throws -> WebhookTokenResolution? {
        try await database.unsafeRead { db in
            let statement = try db.cachedStatement(sql: "SELECT * FROM device WHERE id = ?")
            guard let device = try Row.fetchOne(statement, arguments: [id]).flatMap(Self.device(from:)) else { return nil }
            let dead = try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM dead_token WHERE platform = ? AND token = ?)"),
                arguments: [device.platform.rawValue, device.token]
            ) ?? false
            return WebhookTokenResolution(device: device, isDead: dead)
        }
    }
}
