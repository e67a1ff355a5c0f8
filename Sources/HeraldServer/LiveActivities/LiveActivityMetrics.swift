/// What swaps' Live Activities count.
extension HeraldMetrics {
    /// A swap status and what it did to its activity: `start`, `update`, `end`, `skipped_<why>`
    /// (no push-to-start token, no activity token yet, a stale status, an ended activity, a
    /// final status of an activity never started), or `failed`.
    func liveActivity(_ outcome: String) {
        increment("live_activity_pushes", help: "Swap statuses by what they did to the swap's Live Activity", labels: [("outcome", outcome)])
    }
}
