extension PostgresSchema {
    /// Version 5: what an operator needs to judge a dead letter (when it was first and last
    /// tried, the push service's last answer) and the mark a replay leaves (`replayed_as`, the
    /// new job's id), which makes a second replay do nothing. As SQLite's `v6-dead-letters`.
    static let deadLetters = Migration(
        version: 5,
        name: "dead-letters",
        statements: [
            "ALTER TABLE job ADD COLUMN first_attempt_at double precision",
            "ALTER TABLE job ADD COLUMN last_attempt_at double precision",
            "ALTER TABLE job ADD COLUMN last_answer text",
            "ALTER TABLE job ADD COLUMN replayed_as text",
            "ALTER TABLE job ADD COLUMN replayed_at double precision",
            "CREATE INDEX job_dead_letters ON job (finished_at, id) WHERE state = 'dead' AND replayed_as IS NULL",
        ]
    )
}
