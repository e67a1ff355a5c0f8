import GRDB
import HeraldStore

extension Schema {
    /// Migration `v6-dead-letters`: what an operator needs to judge a dead letter (when it was
    /// first and last tried, the push service's last answer) and the mark a replay leaves
    /// (`replayed_as`, the new job's id), which makes a second replay do nothing.
    static func addDeadLetterColumns(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE job ADD COLUMN first_attempt_at REAL;
                ALTER TABLE job ADD COLUMN last_attempt_at REAL;
                ALTER TABLE job ADD COLUMN last_answer TEXT;
                ALTER TABLE job ADD COLUMN replayed_as TEXT;
                ALTER TABLE job ADD COLUMN replayed_at REAL;
                CREATE INDEX job_dead_letters ON job(finished_at, id) WHERE state = 'dead' AND replayed_as IS NULL;
                """
        )
    }
}
