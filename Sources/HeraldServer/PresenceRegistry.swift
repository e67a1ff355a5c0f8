import Foundation
import HeraldWire
import NIOConcurrencyHelpers

/// Which devices have their app in the foreground, which were woken lately, and how long a
/// woken device takes to show up: the state behind wakes and forwarding hints.
///
/// In memory only (seed 003's server rule needs it per request, at no store cost). It is lost on
/// restart, which errs toward pushing: a device nobody knows to be present gets its wake.
public final class PresenceRegistry: Sendable {
    public struct Configuration: Sendable {
        /// A second wake for the same payment (or kind, without a hash) within this is not pushed.
        public var repeatWindow: TimeInterval = 10
        /// A device woken this long ago and not yet present is still expected ("waking").
        public var wakingWindow: TimeInterval = 30
        /// The wake-to-presence time assumed until Herald has seen some: the user has to notice
        /// the alert and open the app (seed 004 §1.8 waits 10 to 25 s for that).
        public var defaultWakeTime: TimeInterval = 10
        /// Wake-to-presence times kept to estimate the next (the median of these).
        public var sampleCount = 128
        /// Devices tracked at most in each map; past it the oldest entries are dropped. Bounds
        /// memory against a caller waking or heartbeating ever-new devices.
        public var maxEntries = 100_000

        public init() {}
    }

    /// How a device stands, for a forwarding hint.
    public enum Standing: Sendable, Hashable {
        case present
        /// Woken `elapsed` seconds ago and expected in `remaining` (see ``remainingWakeTime``).
        case waking(elapsed: TimeInterval, remaining: TimeInterval)
        /// Neither present nor woken lately: a wake would take about `expected` seconds.
        case away(expected: TimeInterval)
    }

    private struct Woken {
        var at: Date
        var idempotencyKey: String?
    }

    private struct State {
        /// Heartbeats: present until.
        var presentUntil: [String: Date] = [:]
        var streams: [String: [UInt64: AsyncStream<PresenceWakeEvent>.Continuation]] = [:]
        var nextStreamID: UInt64 = 0
        /// The last wake push per device, for hints and wake-to-presence times.
        var wokenAt: [String: Date] = [:]
        /// The last wake per repeat key (device and payment hash or kind).
        var recent: [String: Woken] = [:]
        var samples: [TimeInterval] = []
        var nextSample = 0
        var lastSweep = Date.distantPast
    }

    let configuration: Configuration
    private let state = NIOLockedValueBox(State())
    private let onWakeToPresence: @Sendable (TimeInterval) -> Void

    /// - Parameter onWakeToPresence: told each time a woken device shows up, with how long it took.
    public init(configuration: Configuration = .init(), onWakeToPresence: @escaping @Sendable (TimeInterval) -> Void = { _ in }) {
        self.configuration = configuration
        self.onWakeToPresence = onWakeToPresence
    }

    // MARK: Presence

    /// A heartbeat: present until `now + ttl`.
    public func heartbeat(deviceID: String, ttl: TimeInterval, now: Date) {
        let shownUp = state.withLockedValue { state in
            sweep(&state, now: now)
            state.presentUntil[deviceID] = now.addingTimeInterval(ttl)
            return arrived(deviceID, &state, now: now)
        }
        if let shownUp { onWakeToPresence(shownUp) }
    }

    /// The app went to the background: no longer present through heartbeats (a held stream still counts).
    public func leave(deviceID: String) {
        state.withLockedValue { _ = $0.presentUntil.removeValue(forKey: deviceID) }
    }

    /// A held presence stream: present until ``closeStream(deviceID:id:)``. Wakes arrive on the stream.
    public func openStream(deviceID: String, now: Date) -> (id: UInt64, events: AsyncStream<PresenceWakeEvent>) {
        // A few wakes may queue while a slow client reads; more than that and it is not keeping up.
        let (events, continuation) = AsyncStream.makeStream(of: PresenceWakeEvent.self, bufferingPolicy: .bufferingNewest(16))
        let (id, shownUp) = state.withLockedValue { state in
            sweep(&state, now: now)
            let id = state.nextStreamID
            state.nextStreamID += 1
            state.streams[deviceID, default: [:]][id] = continuation
            return (id, arrived(deviceID, &state, now: now))
        }
        if let shownUp { onWakeToPresence(shownUp) }
        return (id, events)
    }

    public func closeStream(deviceID: String, id: UInt64) {
        let continuation = state.withLockedValue { state -> AsyncStream<PresenceWakeEvent>.Continuation? in
            let removed = state.streams[deviceID]?.removeValue(forKey: id)
            if state.streams[deviceID]?.isEmpty == true { state.streams.removeValue(forKey: deviceID) }
            return removed
        }
        continuation?.finish()
    }

    public func isPresent(deviceID: String, now: Date) -> Bool {
        state.withLockedValue { Self.isPresent(deviceID, $0, now: now) }
    }

    /// Tells the device's held streams of a wake; false when it holds none.
    @discardableResult
    public func deliver(_ event: PresenceWakeEvent, to deviceID: String) -> Bool {
        let continuations = state.withLockedValue { state in state.streams[deviceID].map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.yield(event) }
        return !continuations.isEmpty
    }

    // MARK: Wakes

    /// What a wake with this repeat key may do.
    public enum WakeClaim: Sendable, Hashable {
        /// Push it.
        case push
        /// The same wake (same idempotency key) within the window: let the outbox's idempotency answer.
        case replay
        /// Another wake for the same payment was pushed moments ago.
        case recentlyWoken
    }

    /// Claims the right to push a wake for `repeatKey`; give it back with ``releaseWake(repeatKey:)``
    /// when nothing was pushed after all.
    public func claimWake(repeatKey: String, idempotencyKey: String?, now: Date) -> WakeClaim {
        state.withLockedValue { state in
            sweep(&state, now: now)
            if let last = state.recent[repeatKey], now.timeIntervalSince(last.at) < configuration.repeatWindow {
                if let idempotencyKey, idempotencyKey == last.idempotencyKey { return .replay }
                return .recentlyWoken
            }
            state.recent[repeatKey] = Woken(at: now, idempotencyKey: idempotencyKey)
            return .push
        }
    }

    public func releaseWake(repeatKey: String) {
        state.withLockedValue { _ = $0.recent.removeValue(forKey: repeatKey) }
    }

    /// A wake was pushed to the device: the wake-to-presence clock starts (unless already running).
    public func woke(deviceID: String, now: Date) {
        state.withLockedValue { state in
            if let earlier = state.wokenAt[deviceID], now.timeIntervalSince(earlier) < configuration.wakingWindow { return }
            state.wokenAt[deviceID] = now
        }
    }

    // MARK: Hints

    public func standing(deviceID: String, now: Date) -> Standing {
        state.withLockedValue { state in
            if Self.isPresent(deviceID, state, now: now) { return .present }
            if let woken = state.wokenAt[deviceID] {
                let elapsed = now.timeIntervalSince(woken)
                if elapsed < configuration.wakingWindow {
                    // Overdue devices are still worth one more try soon, not never.
                    return .waking(elapsed: elapsed, remaining: max(remainingWakeTime(state, elapsed: elapsed), 1))
                }
            }
            return .away(expected: expectedWakeTime(state))
        }
    }

    /// The median wake-to-presence time seen, or the configured default before any.
    public var expectedWakeTime: TimeInterval { state.withLockedValue { expectedWakeTime($0) } }

    /// How much longer a device woken `elapsed` seconds ago is likely to take: the median of the
    /// times seen that were longer than `elapsed`, less `elapsed`. Conditioning on "not here yet"
    /// matters: the first devices to show up are the fast ones (a silent push that got through),
    /// and their plain median told senders "1 s" for users who take 5 to 10 s to open the app.
    /// With no longer time seen yet, the default is the guess.
    private func remainingWakeTime(_ state: State, elapsed: TimeInterval) -> TimeInterval {
        let longer = state.samples.filter { $0 > elapsed }.sorted()
        guard !longer.isEmpty else { return configuration.defaultWakeTime - elapsed }
        return longer[longer.count / 2] - elapsed
    }

    private func expectedWakeTime(_ state: State) -> TimeInterval {
        guard !state.samples.isEmpty else { return configuration.defaultWakeTime }
        let sorted = state.samples.sorted()
        return sorted[sorted.count / 2]
    }

    // MARK: Internals

    private static func isPresent(_ deviceID: String, _ state: State, now: Date) -> Bool {
        if state.streams[deviceID] != nil { return true }
        if let until = state.presentUntil[deviceID], until > now { return true }
        return false
    }

    /// The device showed up: if it was being woken, how long that took.
    private func arrived(_ deviceID: String, _ state: inout State, now: Date) -> TimeInterval? {
        guard let woken = state.wokenAt.removeValue(forKey: deviceID) else { return nil }
        let took = now.timeIntervalSince(woken)
        guard took >= 0, took < configuration.wakingWindow else { return nil }
        if state.samples.count < configuration.sampleCount {
            state.samples.append(took)
        } else {
            state.samples[state.nextSample] = took
            state.nextSample = (state.nextSample + 1) % configuration.sampleCount
        }
        return took
    }

    /// Drops what has expired, at most once a second; and, past ``Configuration/maxEntries``,
    /// the oldest entries, so the maps stay bounded whatever callers send.
    private func sweep(_ state: inout State, now: Date) {
        let over =
            state.presentUntil.count > configuration.maxEntries || state.wokenAt.count > configuration.maxEntries
            || state.recent.count > configuration.maxEntries
        guard over || now.timeIntervalSince(state.lastSweep) >= 1 else { return }
        state.lastSweep = now
        state.presentUntil = state.presentUntil.filter { $0.value > now }
        state.wokenAt = state.wokenAt.filter { now.timeIntervalSince($0.value) < configuration.wakingWindow }
        state.recent = state.recent.filter { now.timeIntervalSince($0.value.at) < configuration.repeatWindow }
        // To nine tenths, so a flood pays for one sort per tenth of the cap, not one per call.
        let target = configuration.maxEntries * 9 / 10
        Self.trim(&state.presentUntil, to: target) { $0 }
        Self.trim(&state.wokenAt, to: target) { $0 }
        Self.trim(&state.recent, to: target) { $0.at }
    }

    private static func trim<V>(_ map: inout [String: V], to limit: Int, by date: (V) -> Date) {
        guard map.count > limit else { return }
        let keep = map.sorted { date($0.value) > date($1.value) }.prefix(limit)
        map = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
    }
}
