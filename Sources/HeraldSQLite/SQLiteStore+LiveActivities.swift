import Foundation
import GRDB
import HeraldStore
import HeraldWire

extension SQLiteStore: LiveActivityStore {
    public func setLiveActivityStartToken(deviceID: String, token: String?, now: Date) async throws {
        try await database.write { db in
            guard let token else {
                try db.execute(sql: "DELETE FROM live_activity_start WHERE device_id = ?", arguments: [deviceID])
                return
            }
            try db.execute(
                sql: """
                    INSERT INTO live_activity_start (device_id, token, updated_at) VALUES (?, ?, ?)
                    ON CONFLICT (device_id) DO UPDATE SET token = excluded.token, updated_at = excluded.updated_at
                    """,
                arguments: [deviceID, token, now.timeIntervalSince1970])
        }
    }

    public func liveActivityStartToken(deviceID: String) async throws -> String? {
        try await database.read { db in
            try String.fetchOne(db, sql: "SELECT token FROM live_activity_start WHERE device_id = ?", arguments: [deviceID])
        }
    }

    public func setLiveActivityToken(deviceID: String, swapID: String, token: String, now: Date) async throws {
        try await database.write { db in
            // The activity exists on the phone whether or not Herald started it (the app may have):
            // a row without history takes any later status.
            try db.execute(
                sql: """
                    INSERT INTO live_activity (device_id, swap_id, push_token, last_rank, last_timestamp, last_sent_at, updated_at)
                    VALUES (?, ?, ?, -1, 0, 0, ?)
                    ON CONFLICT (device_id, swap_id) DO UPDATE SET push_token = excluded.push_token, updated_at = excluded.updated_at
                    """,
                arguments: [deviceID, swapID, token, now.timeIntervalSince1970])
        }
    }

    public func deleteLiveActivity(deviceID: String, swapID: String) async throws -> Bool {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM live_activity WHERE device_id = ? AND swap_id = ?", arguments: [deviceID, swapID])
            return db.changesCount > 0
        }
    }

    public func planLiveActivity(
        deviceID: String, swapID: String, step: LiveActivityStep, now: Date, minimumInterval: TimeInterval
    ) async throws -> Result<LiveActivityPush, LiveActivitySkipped> {
        let nowValue = now.timeIntervalSince1970
        return try await database.write { db in
            let existing = try Row.fetchOne(
                db,
                sql: """
                    SELECT push_token, last_rank, last_timestamp, last_sent_at, pending_job_id, pending_event, ended
                    FROM live_activity WHERE device_id = ? AND swap_id = ?
                    """,
                arguments: [deviceID, swapID]
            ).map { row in
                LiveActivityRule.Row(
                    pushToken: row["push_token"], lastRank: row["last_rank"], lastTimestamp: row["last_timestamp"],
                    lastSentAt: Date(timeIntervalSince1970: row["last_sent_at"]), pendingJobID: row["pending_job_id"],
                    pendingEvent: (row["pending_event"] as String?).flatMap(LiveActivityEvent.init(rawValue:)), ended: row["ended"])
            }
            let startToken =
                existing == nil
                ? try String.fetchOne(db, sql: "SELECT token FROM live_activity_start WHERE device_id = ?", arguments: [deviceID]) : nil
            let decision = LiveActivityRule.decide(
                existing: existing, startToken: startToken, step: step, now: now, minimumInterval: minimumInterval)
            guard case .success(let decided) = decision else { return decision.map(\.push) }
            if let replaced = decided.replaces {
                try db.execute(
                    sql: "DELETE FROM job WHERE id = ? AND state = 'pending' AND (lease_until IS NULL OR lease_until < ?)",
                    arguments: [replaced, nowValue])
            }
            let row = decided.row
            try db.execute(
                sql: """
                    INSERT INTO live_activity (device_id, swap_id, push_token, last_rank, last_timestamp, last_sent_at,
                                               pending_job_id, pending_event, ended, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (device_id, swap_id) DO UPDATE SET
                        last_rank = excluded.last_rank, last_timestamp = excluded.last_timestamp, last_sent_at = excluded.last_sent_at,
                        pending_job_id = excluded.pending_job_id, pending_event = excluded.pending_event, ended = excluded.ended,
                        updated_at = excluded.updated_at
                    """,
                arguments: [
                    deviceID, swapID, row.pushToken, row.lastRank, row.lastTimestamp, row.lastSentAt.timeIntervalSince1970,
                    row.pendingJobID, row.pendingEvent?.rawValue, row.ended, nowValue,
                ])
            return .success(decided.push)
        }
    }
}
