#if canImport(UserNotifications)
import HeraldDevice
#endif
