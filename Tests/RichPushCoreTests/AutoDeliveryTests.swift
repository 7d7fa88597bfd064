import RichPushCore
import Testing

/// The `auto` delivery's choice per device (``AutoDelivery``): silent while the estimated budget
/// allows and the device fetched its last silent push; else the alert.
@Suite("Auto delivery")
struct AutoDeliveryTests {
    let auto = AutoDelivery(burst: 3, perHour: 3, answerWindow: .seconds(30))
    let hour: Int64 = 3_600_000

    /// An iPhone that fetches every silent push gets three at once, then the alert until the
    /// bucket refills (one token every 20 minutes).
    @Test func anIPhoneGetsSilentPushesWithinItsBudgetThenAlerts() {
        var estimate: DeviceEstimate?
        var now: Int64 = 1_000_000
        var forms: [PushRenderer.Mode] = []
        for _ in 0..<4 {
            let choice = auto.choose(estimate, format: .apns, now: now)
            forms.append(choice.form)
            if choice.form == .silent {
                estimate = auto.spent(estimate, notification: forms.count, at: now)
                estimate?.answered = true  // the device fetched it
            }
            now += 1000
        }
        #expect(forms == [.silent, .silent, .silent, .alert])
        #expect(auto.choose(estimate, format: .apns, now: now).reason.contains("budget spent"))
        // A third of an hour later one token is back.
        #expect(auto.choose(estimate, format: .apns, now: now + hour / 3).form == .silent)
    }

    /// An iPhone that did not fetch its last silent push (force-quit, Low Power Mode) gets the
    /// alert, whatever its budget, until it fetches it (its app opened and caught up).
    @Test func anUnansweredSilentPushTurnsAnIPhoneToAlerts() {
        var estimate = auto.spent(nil, notification: 7, at: 0)
        let choice = auto.choose(estimate, format: .apns, now: 10 * hour)
        #expect(choice.form == .alert)
        #expect(choice.reason.contains("silent push 7 was not fetched"), "\(choice.reason)")
        estimate.answered = true
        #expect(auto.choose(estimate, format: .apns, now: 10 * hour).form == .silent)
    }

    /// An Android app has no budget; it gets alerts once a silent push stayed unfetched past
    /// the answer window, not before.
    @Test func anAndroidAppGetsAlertsOnlyPastTheAnswerWindow() {
        var estimate: DeviceEstimate?
        for id in 1...10 { estimate = auto.spent(estimate, notification: id, at: Int64(id)) }
        #expect(auto.choose(estimate, format: .fcm, now: 10 + 29_000).form == .silent)
        let late = auto.choose(estimate, format: .fcm, now: 10 + 31_000)
        #expect(late.form == .alert)
        #expect(late.reason.contains("within 30"), "\(late.reason)")
        estimate?.answered = true
        #expect(auto.choose(estimate, format: .fcm, now: 10 + 31_000).form == .silent)
    }

    @Test func aBrowserAlwaysGetsTheServiceWorkersForm() {
        let unanswered = auto.spent(nil, notification: 1, at: 0)
        #expect(auto.choose(unanswered, format: .webpush, now: hour).form == .silent)
    }

    @Test func anEstimateSurvivesItsStoredForm() throws {
        let estimate = DeviceEstimate(tokens: 1.25, refilledAt: 1_765_000_000_123, lastSilent: 42, lastSilentAt: 1_765_000_000_000)
        #expect(DeviceEstimate(packed: estimate.packed) == estimate)
        let fresh = DeviceEstimate(tokens: 3, refilledAt: 5)
        #expect(DeviceEstimate(packed: fresh.packed) == fresh)
        for bad in ["", "x 1 - 2", "1 2 3", "1 2 x 4", "nan 1 - 2", "1 2 - 3 4"] { #expect(DeviceEstimate(packed: bad) == nil, "\(bad)") }
    }

    @Test func settingsOutOfBoundsAreNamed() {
        #expect(AutoDelivery().problem == nil)
        #expect(AutoDelivery(burst: 0).problem != nil)
        #expect(AutoDelivery(perHour: 0).problem != nil)
        #expect(AutoDelivery(answerWindow: .zero).problem != nil)
    }

    @Test func renderingAnAutoNotificationTakesTheChosenForm() throws {
        var notification = RenderingTests.notification("Hi")
        notification.delivery.mode = .auto
        let renderer = PushRenderer(apiBaseURL: "http://api.example")
        let silent = String(decoding: try renderer.render(notification, format: .apns, collapseID: "42").payload, as: UTF8.self)
        #expect(silent.contains("content-available") && !silent.contains("richUrl"), "\(silent)")
        let alert = String(
            decoding: try renderer.render(notification, format: .apns, collapseID: "42", form: .alert, richURL: "https://m.example/x?s=1")
                .payload,
            as: UTF8.self)
        #expect(
            alert.contains("mutable-content") && alert.contains(#""richUrl":"https:\/\/m.example\/x?s=1""#)
                || alert.contains(#""richUrl":"https://m.example/x?s=1""#), "\(alert)")
    }
}
