/// Polls `condition` until it holds or `timeout` passes; whether it held. The one way tests wait
/// for something that happens on its own time (a row written, a process up). To prove that
/// something does *not* happen, wait on what would cause it instead.
public func eventually(
    timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(20), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
