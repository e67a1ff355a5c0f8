import Foundation
import HeraldStore
import HeraldWire
import PostgresNIO

extension PostgresStore: LiveActivityStore {
    public func setLiveActivityStartToken(deviceID: String, token: String?, now: Date) async throws {
        guard let token else {
            try await rows("DELETE FROM live_activity_start WHERE device_id = \(deviceID)")
            return
        }
        try await rows(
            """
            INSERT INTO live_activity_start (device_id, token, updated_at) VALUES (\(deviceID), \(token), \(now.timeIntervalSince1970))
            ON CONFLICT (device_id) DO UPDATE SET token = excluded.token, updated_at = excluded.updated_at
            """)
    }

    public func liveActivityStartToken(deviceID: String) async throws -> String? {
        try await rows("SELECT token FROM live_activity_start WHERE device_id = \(deviceID)").first?.decode(String.self)
    }

    public func setLiveActivityToken(deviceID: String, swapID: String, token: String, now: Date) async throws {
        // The activity exists on the phone whether or not Herald started it (the app may have):
        // a row without history takes any later status.
        try await rows(
            """
            INSERT INTO live_activity (device_id, swap_id, push_token, last_rank, last_timestamp, last_sent_at, updated_at)
            VALUES (\(deviceID), \(swapID), \(token), -1, 0, 0, \(now.timeIntervalSince1970))
            ON CONFLICT (device_id, swap_id) DO UPDATE SET push_token = excluded.push_token, updated_at = excluded.updated_at
            """)
    }

    public func deleteLiveActivity(deviceID: String, swapID: String) async throws -> Bool {
        !(try await rows("DELETE FROM live_activity WHERE device_id = \(deviceID) AND swap_id = \(swapID) RETURNING swap_id")).isEmpty
    }

    public func planLiveActivity(
        deviceID: String, swapID: String, step: LiveActivityStep, now: Date, minimumInterval: TimeInterval
    ) async throws -> Result<LiveActivityPush, LiveActivitySkipped> {
        let nowValue = now.timeIntervalSince1970
        return try await transaction { connection, logger in
            // One decision at a time per activity, on any instance, whether or not its row exists yet.
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(deviceID + ":" + swapID)))", logger: logger)
            let found = try await connection.query(
                """
                SELECT push_token, last_rank, last_timestamp, last_sent_at, pending_job_id, pending_event, ended
                FROM live_activity WHERE device_id = \(deviceID) AND swap_id = \(swapID)
                """, logger: logger
            ).collect().first
            var existing: LiveActivityRule.Row?
            if let found {
                let (token, rank, timestamp, sentAt, jobID, event, ended) = try found.decode(
                    (String?, Int, Int64, Double, String?, String?, Bool).self)
                existing = LiveActivityRule.Row(
                    pushToken: token, lastRank: rank, lastTimestamp: timestamp, lastSentAt: Date(timeIntervalSince1970: sentAt),
                    pendingJobID: jobID, pendingEvent: event.flatMap(LiveActivityEvent.init(rawValue:)), ended: ended)
            }
            var startToken: String?
            if existing == nil {
                startToken = try await connection.query(
                    "SELECT token FROM live_activity_start WHERE device_id = \(deviceID)", logger: logger
                ).collect().first?.decode(String.self)
            }
            let decision = LiveActivityRule.decide(
                existing: existing, startToken: startToken, step: step, now: now, minimumInterval: minimumInterval)
            guard case .success(let decided) = decision else { return decision.map(\.push) }
            if let replaced = decided.replaces {
                try await connection.query(
                    "DELETE FROM job WHERE id = \(replaced) AND state = 'pending' AND (lease_until IS NULL OR lease_until < \(nowValue))",
                    logger: logger)
            }
            let row = decided.row
            try await connection.query(
                """
                INSERT INTO live_activity (device_id, swap_id, push_token, last_rank, last_timestamp, last_sent_at,
                                           pending_job_id, pending_event, ended, updated_at)
                VALUES (\(deviceID), \(swapID), \(row.pushToken), \(row.lastRank), \(row.lastTimestamp),
                        \(row.lastSentAt.timeIntervalSince1970), \(row.pendingJobID), \(row.pendingEvent?.rawValue), \(row.ended), \(nowValue))
                ON CONFLICT (device_id, swap_id) DO UPDATE SET
                    last_rank = excluded.last_rank, last_timestamp = excluded.last_timestamp, last_sent_at = excluded.last_sent_at,
                    pending_job_id = excluded.pending_job_id, pending_event = excluded.pending_event, ended = excluded.ended,
                    updated_at = excluded.updated_at
                """, logger: logger)
            return .success(decided.push)
        }
    }
}
