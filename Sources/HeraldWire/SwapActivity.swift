/// The static data of a swap's Live Activity: set when it starts, the same for its whole life.
///
/// The app declares the same shape as its `ActivityAttributes` type (docs/phone.md); ActivityKit
/// decodes a start push's `attributes` into it with a default `JSONDecoder`, so the keys are
/// spelled out here and there alike.
public struct SwapActivityAttributes: Codable, Sendable, Hashable {
    /// The swap's id as Breez's `swap.update` webhook names it.
    public var swapID: String

    public init(swapID: String) {
        self.swapID = swapID
    }

    enum CodingKeys: String, CodingKey {
        case swapID = "swap_id"
    }
}

/// What a swap's Live Activity shows now: its status, how far along it is, a line of text and
/// when Herald last heard of it.
///
/// `updatedAt` is whole Unix seconds, not a `Date`: ActivityKit decodes content-state with a
/// default `JSONDecoder`, which reads a `Date` as seconds since 2001, so a `Date` written as
/// Unix time would land 31 years late. The app turns the integer into a date itself.
public struct SwapActivityContentState: Codable, Sendable, Hashable {
    /// The swap's status as Breez reports it (`transaction.mempool`, `completed` …).
    public var status: String
    /// The step reached, counted from 1.
    public var step: Int
    /// How many steps the swap has in all.
    public var steps: Int
    /// The line shown for this step.
    public var title: String
    /// Unix seconds of the webhook this state comes from.
    public var updatedAt: Int

    public init(status: String, step: Int, steps: Int, title: String, updatedAt: Int) {
        self.status = status
        self.step = step
        self.steps = steps
        self.title = title
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case status, step, steps, title
        case updatedAt = "updated_at"
    }
}

/// What an ActivityKit push does to the Live Activity it reaches.
public enum LiveActivityEvent: String, Codable, Sendable, Hashable, CaseIterable {
    /// Starts one, through the app's push-to-start token.
    case start
    /// Changes a running one's content, through that activity's own push token.
    case update
    /// Ends it; it stays on the Lock Screen until its dismissal date.
    case end
}

/// The alert of a Live Activity push: required to start one (the system shows it as the
/// activity appears), optional on an update, where it lights the screen. A name kept for the
/// library's users; the type is every push's text, and an alert with no `image` codes as
/// `{title, body}`.
public typealias LiveActivityAlert = NotificationText

/// The `aps` dictionary of an ActivityKit push (`apns-push-type: liveactivity`), with Apple's
/// key names. Dates are whole Unix seconds, as APNs reads them.
///
/// Build one with ``start(timestamp:attributes:contentState:alert:staleDate:)``,
/// ``update(timestamp:contentState:alert:staleDate:)`` or
/// ``end(timestamp:contentState:dismissalDate:)``, which keep to what ActivityKit accepts: a
/// start names the attributes type and carries attributes and an alert, and only an end may carry
/// a dismissal date.
public struct LiveActivityAPS: Codable, Sendable, Hashable {
    /// Unix seconds when the content was current: the device keeps the newest content by it, so
    /// the webhook's time, not the send's, belongs here.
    public var timestamp: Int
    public var event: LiveActivityEvent
    /// Herald sends it on every event, an end too, so an ended activity shows the swap's final
    /// state until it is dismissed.
    public var contentState: SwapActivityContentState
    /// Unix seconds after which the system marks the content out of date.
    public var staleDate: Int?
    /// `end` only: Unix seconds when the system removes the ended activity (absent: its default,
    /// up to four hours; in the past: at once).
    public var dismissalDate: Int?
    /// `start` only: the name of the app's `ActivityAttributes` type.
    public var attributesType: String?
    /// `start` only.
    public var attributes: SwapActivityAttributes?
    public var alert: NotificationText?

    /// The name of the app's `ActivityAttributes` type, which a start push must give as
    /// `attributes-type`: ActivityKit matches it against the Swift type's name.
    public static let swapAttributesType = "SwapActivityAttributes"

    public init(
        timestamp: Int, event: LiveActivityEvent, contentState: SwapActivityContentState, staleDate: Int? = nil,
        dismissalDate: Int? = nil, attributesType: String? = nil, attributes: SwapActivityAttributes? = nil,
        alert: NotificationText? = nil
    ) {
        self.timestamp = timestamp
        self.event = event
        self.contentState = contentState
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.attributesType = attributesType
        self.attributes = attributes
        self.alert = alert
    }

    /// Starts a swap's Live Activity through the app's push-to-start token.
    public static func start(
        timestamp: Int, attributes: SwapActivityAttributes, contentState: SwapActivityContentState, alert: NotificationText,
        staleDate: Int? = nil
    ) -> LiveActivityAPS {
        LiveActivityAPS(
            timestamp: timestamp, event: .start, contentState: contentState, staleDate: staleDate,
            attributesType: swapAttributesType, attributes: attributes, alert: alert)
    }

    /// Changes a running activity's content through its own push token.
    public static func update(
        timestamp: Int, contentState: SwapActivityContentState, alert: NotificationText? = nil, staleDate: Int? = nil
    ) -> LiveActivityAPS {
        LiveActivityAPS(timestamp: timestamp, event: .update, contentState: contentState, staleDate: staleDate, alert: alert)
    }

    /// Ends a running activity, showing `contentState` until `dismissalDate`.
    public static func end(timestamp: Int, contentState: SwapActivityContentState, dismissalDate: Int? = nil) -> LiveActivityAPS {
        LiveActivityAPS(timestamp: timestamp, event: .end, contentState: contentState, dismissalDate: dismissalDate)
    }

    enum CodingKeys: String, CodingKey {
        case timestamp, event
        case contentState = "content-state"
        case staleDate = "stale-date"
        case dismissalDate = "dismissal-date"
        case attributesType = "attributes-type"
        case attributes, alert
    }
}

/// The whole body of an ActivityKit push: `{"aps": …}` and nothing beside it, since ActivityKit
/// reads only `aps`.
public struct LiveActivityPayload: Codable, Sendable, Hashable {
    public var aps: LiveActivityAPS

    public init(aps: LiveActivityAPS) {
        self.aps = aps
    }

    /// The `apns-push-type` of an ActivityKit push.
    public static let pushType = "liveactivity"

    /// The `apns-topic` of an ActivityKit push for the app `bundleID`: APNs refuses the bare
    /// bundle id for this push type.
    public static func topic(bundleID: String) -> String {
        bundleID + ".push-type.liveactivity"
    }
}
