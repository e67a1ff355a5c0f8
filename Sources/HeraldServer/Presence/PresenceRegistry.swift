import Foundation
import HeraldWire
import NIOConcurrencyHelpers

/// Which devices have their app in the foreground, which were woken lately, and how long a
/// woken device takes to show up: the state behind wakes and forwarding hints.
///
/// In memory (every wake asks it, so it must cost no store read). It is lost on
/// restart, which errs toward pushing: a device nobody knows to be present gets its wake. With
/// several instances on one database, each instance's registry tells the others of every change
/// through ``changes`` and applies theirs (``apply(_:now:)``), so all hold the same state; a
/// stream held by another instance counts as present while its holder renews it, and wakes for
/// it are handed to that holder.
public final class PresenceRegistry: Sendable {
    public struct Configuration: Sendable {
        /// A second wake for the same payment (or kind, without a hash) within this is not pushed.
        public var repeatWindow: TimeInterval = 10
        /// A device woken this long ago and not yet present is still expected ("waking").
        public var wakingWindow: TimeInterval = 30
        /// The wake-to-presence time assumed until Herald has seen some: the user has to notice
        /// the alert and open the app, which takes users 10 to 25 s.
        public var defaultWakeTime: TimeInterval = 10
        /// Wake-to-presence times kept to estimate the next (the median of these).
        public var sampleCount = 128
        /// Devices tracked at most in each map; past it the oldest entries are dropped. Bounds
        /// memory against a caller waking or heartbeating ever-new devices.
        public var maxEntries = 100_000
        /// Streams one device holds at once; a newer one closes the oldest (an app reconnecting
        /// after a network change leaves its old stream behind).
        public var maxStreamsPerDevice = 2
        /// Streams held at once on this instance, every device together: a share of the server's
        /// connections, so streams cannot hold them all (`buildApplication` sets half of
        /// `max_connections`).
        public var maxStreams = 2_048
        /// How long a stream is held before the server ends it; the app's reporter reconnects.
        public var maxStreamAge: Duration = .seconds(3600)

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
        /// Streams in ``streams``, all devices together.
        var streamCount = 0
        var nextStreamID: UInt64 = 0
        /// The last wake push per device, for hints and wake-to-presence times.
        var wokenAt: [String: Date] = [:]
        /// The last wake per repeat key (device and payment hash or kind).
        var recent: [String: Woken] = [:]
        /// Streams held by other instances: device → holder → present until (renewed).
        var remoteStreams: [String: [String: Date]] = [:]
        var samples: [TimeInterval] = []
        var nextSample = 0
        var lastSweep = Date.distantPast
    }

    let configuration: Configuration
    private let state = NIOLockedValueBox(State())
    private let onWakeToPresence: @Sendable (TimeInterval) -> Void
    /// This instance, as the origin of its changes and the holder of its streams.
    let instanceID = UUID().uuidString
    /// This instance's changes, in order, for ``PresenceMirror`` to tell the others; finished
    /// at once (nothing buffered) when no mirror listens, as on SQLite.
    let changes: AsyncStream<PresenceChange>
    private let changesOut: AsyncStream<PresenceChange>.Continuation

    /// - Parameters:
    ///   - shared: Whether other instances share this one's state (a shared database): only then
    ///     are changes kept for ``changes``.
    ///   - onWakeToPresence: told each time a woken device shows up here, with how long it took.
    public init(
        configuration: Configuration = .init(), shared: Bool = false,
        onWakeToPresence: @escaping @Sendable (TimeInterval) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.onWakeToPresence = onWakeToPresence
        (changes, changesOut) = AsyncStream.makeStream(of: PresenceChange.self, bufferingPolicy: .bufferingNewest(10_000))
        if !shared { changesOut.finish() }
    }

    /// How long a stream held elsewhere counts as present without its holder renewing it: three
    /// keep-alive intervals, so a holder that died stops blocking wakes soon after.
    static let remoteStreamLease: TimeInterval = 45

    private func tell(_ kind: PresenceChange.Kind, _ device: String, until: Date? = nil, at: Date? = nil, event: PresenceWakeEvent? = nil) {
        changesOut.yield(PresenceChange(kind: kind, origin: instanceID, device: device, until: until, at: at, event: event))
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
        tell(.heartbeat, deviceID, until: now.addingTimeInterval(ttl))
    }

    /// The app went to the background: no longer present through heartbeats (a held stream still counts).
    public func leave(deviceID: String) {
        state.withLockedValue { _ = $0.presentUntil.removeValue(forKey: deviceID) }
        tell(.leave, deviceID)
    }

    /// A held presence stream: present until ``closeStream(deviceID:id:)``. Wakes arrive on the stream.
    /// Nil when this instance holds ``Configuration/maxStreams`` already.
    public func openStream(deviceID: String, now: Date) -> (id: UInt64, events: AsyncStream<PresenceWakeEvent>)? {
        // A few wakes may queue while a slow client reads; more than that and it is not keeping up.
        let (events, continuation) = AsyncStream.makeStream(of: PresenceWakeEvent.self, bufferingPolicy: .bufferingNewest(16))
        let maxStreams = configuration.maxStreams
        let perDevice = max(1, configuration.maxStreamsPerDevice)
        let opened = state.withLockedValue { state -> (id: UInt64, shownUp: TimeInterval?, evicted: [AsyncStream<PresenceWakeEvent>.Continuation])? in
            sweep(&state, now: now)
            // The device's oldest streams make room for its new one before the total is judged.
            var evicted: [AsyncStream<PresenceWakeEvent>.Continuation] = []
            while let held = state.streams[deviceID], held.count >= perDevice, let oldest = held.keys.min() {
                if let continuation = state.streams[deviceID]?.removeValue(forKey: oldest) { evicted.append(continuation) }
                state.streamCount -= 1
            }
            guard state.streamCount < maxStreams else {
                if state.streams[deviceID]?.isEmpty == true { state.streams.removeValue(forKey: deviceID) }
                return nil
            }
            let id = state.nextStreamID
            state.nextStreamID += 1
            state.streams[deviceID, default: [:]][id] = continuation
            state.streamCount += 1
            return (id, arrived(deviceID, &state, now: now), evicted)
        }
        guard let opened else {
            continuation.finish()
            return nil
        }
        for old in opened.evicted { old.finish() }
        let (id, shownUp) = (opened.id, opened.shownUp)
        if let shownUp { onWakeToPresence(shownUp) }
        renewStream(deviceID: deviceID, now: now)
        return (id, events)
    }

    /// Tells the other instances the device's stream is still held here: at opening and at
    /// every keep-alive.
    public func renewStream(deviceID: String, now: Date) {
        tell(.streamHeld, deviceID, until: now.addingTimeInterval(Self.remoteStreamLease))
    }

    public func closeStream(deviceID: String, id: UInt64) {
        let (continuation, last) = state.withLockedValue { state -> (AsyncStream<PresenceWakeEvent>.Continuation?, Bool) in
            let removed = state.streams[deviceID]?.removeValue(forKey: id)
            if removed != nil { state.streamCount -= 1 }
            guard state.streams[deviceID]?.isEmpty == true else { return (removed, false) }
            state.streams.removeValue(forKey: deviceID)
            return (removed, removed != nil)
        }
        continuation?.finish()
        if last { tell(.streamClosed, deviceID) }
    }

    public func isPresent(deviceID: String, now: Date) -> Bool {
        state.withLockedValue { Self.isPresent(deviceID, $0, now: now) }
    }

    /// Tells the device's held streams of a wake, here or (through their holders) on other
    /// instances; false when it holds none anywhere.
    @discardableResult
    public func deliver(_ event: PresenceWakeEvent, to deviceID: String, now: Date = Date()) -> Bool {
        let remote = state.withLockedValue { $0.remoteStreams[deviceID]?.values.contains { $0 > now } ?? false }
        let local = deliverHere(event, to: deviceID)
        if !local, remote { tell(.deliver, deviceID, event: event) }
        return local || remote
    }

    /// Tells the device's streams held by this instance; false when it holds none.
    private func deliverHere(_ event: PresenceWakeEvent, to deviceID: String) -> Bool {
        let continuations = state.withLockedValue { state in state.streams[deviceID].map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.yield(event) }
        return !continuations.isEmpty
    }

    /// Applies another instance's change (its own are skipped).
    func apply(_ change: PresenceChange, now: Date) {
        guard change.origin != instanceID else { return }
        switch change.kind {
        case .heartbeat:
            guard let until = change.until else { return }
            state.withLockedValue { state in
                sweep(&state, now: now)
                state.presentUntil[change.device] = until
                // The wake-to-presence sample is the receiving instance's to record.
                state.wokenAt.removeValue(forKey: change.device)
            }
        case .leave:
            state.withLockedValue { _ = $0.presentUntil.removeValue(forKey: change.device) }
        case .streamHeld:
            guard let until = change.until else { return }
            state.withLockedValue { state in
                state.remoteStreams[change.device, default: [:]][change.origin] = until
                state.wokenAt.removeValue(forKey: change.device)
            }
        case .streamClosed:
            state.withLockedValue { state in
                state.remoteStreams[change.device]?.removeValue(forKey: change.origin)
                if state.remoteStreams[change.device]?.isEmpty == true { state.remoteStreams.removeValue(forKey: change.device) }
            }
        case .woke:
            guard let at = change.at else { return }
            state.withLockedValue { state in
                if let earlier = state.wokenAt[change.device], at.timeIntervalSince(earlier) < configuration.wakingWindow { return }
                state.wokenAt[change.device] = at
            }
        case .deliver:
            guard let event = change.event else { return }
            _ = deliverHere(event, to: change.device)
        }
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
        let started = state.withLockedValue { state in
            if let earlier = state.wokenAt[deviceID], now.timeIntervalSince(earlier) < configuration.wakingWindow { return false }
            state.wokenAt[deviceID] = now
            return true
        }
        if started { tell(.woke, deviceID, at: now) }
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
        if let remote = state.remoteStreams[deviceID], remote.values.contains(where: { $0 > now }) { return true }
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
        state.remoteStreams = state.remoteStreams.compactMapValues { holders in
            let live = holders.filter { $0.value > now }
            return live.isEmpty ? nil : live
        }
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
