import RichPushSimulator
import Testing

/// The platforms' rules as ``DeviceRuleBook`` applies them, with time passed in (simulated
/// seconds): Apple's background budget, force-quit and Low Power Mode, the extension path,
/// Android's Doze, stopped apps and deprioritized high-priority messages.
@Suite struct DeviceRuleBookTests {
    let background = IncomingPush(kind: .background, highPriority: false)
    let highData = IncomingPush(kind: .background, highPriority: true)
    let normalData = IncomingPush(kind: .background, highPriority: false)
    let extensionAlert = IncomingPush(kind: .alert(serviceExtension: true), highPriority: true)

    func book(_ configure: (inout DeviceRules) -> Void = { _ in }) -> DeviceRuleBook {
        var rules = DeviceRules()
        configure(&rules)
        return DeviceRuleBook(rules: rules)
    }

    @Test func anIPhoneInTheBackgroundTakesItsBurstThenHoldsBackOnePush() {
        let book = book()
        for second in 0..<3 {
            #expect(book.arrive(background, device: 0, platform: .ios, condition: .background, at: Double(second)) == .deliver(.launch))
        }
        guard
            case .deferred(.launch, let at, _, let first, true) = book.arrive(
                background, device: 0, platform: .ios, condition: .background, at: 3)
        else {
            Issue.record("the fourth background push within the hour was not held back")
            return
        }
        // 3 an hour: a token every 1,200 s, refilling since the first push at 0.
        #expect(at >= 1199 && at <= 1203)
        // A later push replaces the one held back: same due time, the first no longer released.
        guard
            case .deferred(.launch, let again, _, let second, true) = book.arrive(
                background, device: 0, platform: .ios, condition: .background, at: 10)
        else {
            Issue.record("the fifth background push was not held back")
            return
        }
        #expect(again == at)
        #expect(!book.release(ticket: first, device: 0, at: at))
        #expect(book.release(ticket: second, device: 0, at: at))
        // The token it waited for is spent: the next push waits for another.
        if case .deliver = book.arrive(background, device: 0, platform: .ios, condition: .background, at: at + 1) {
            Issue.record("a push right after the held-back one was delivered: the budget was not spent")
        }
        // Other devices have budgets of their own.
        #expect(book.arrive(background, device: 1, platform: .ios, condition: .background, at: 10) == .deliver(.launch))
    }

    @Test func theBudgetRefillsAtItsHourlyRate() {
        let book = book { $0.backgroundPushesPerHour = 6 }
        for _ in 0..<3 { _ = book.arrive(background, device: 0, platform: .ios, condition: .suspended, at: 0) }
        if case .deliver = book.arrive(background, device: 0, platform: .ios, condition: .suspended, at: 599) {
            Issue.record("delivered before a token came back (6 an hour: one every 600 s)")
        }
        let book2 = self.book { $0.backgroundPushesPerHour = 6 }
        for _ in 0..<3 { _ = book2.arrive(background, device: 0, platform: .ios, condition: .background, at: 0) }
        #expect(book2.arrive(background, device: 0, platform: .ios, condition: .background, at: 600) == .deliver(.launch))
    }

    @Test func aForegroundAppGetsEveryPushWithoutSpendingItsBudget() {
        let book = book()
        for second in 0..<20 {
            #expect(book.arrive(background, device: 0, platform: .ios, condition: .foreground, at: Double(second)) == .deliver(.launch))
        }
        #expect(book.arrive(background, device: 0, platform: .ios, condition: .background, at: 21) == .deliver(.launch))
    }

    @Test func aForceQuitIPhoneWakesOnlyForAlerts() {
        let book = book()
        guard case .dropped(let reason) = book.arrive(background, device: 0, platform: .ios, condition: .forceQuit, at: 0) else {
            Issue.record("a background push woke a force-quit app")
            return
        }
        #expect(reason.contains("force-quit"))
        #expect(book.arrive(extensionAlert, device: 0, platform: .ios, condition: .forceQuit, at: 0) == .deliver(.serviceExtension))
        #expect(
            book.arrive(
                IncomingPush(kind: .alert(serviceExtension: false), highPriority: true), device: 0, platform: .ios, condition: .forceQuit,
                at: 0)
                == .deliver(.systemAlert))
    }

    @Test func lowPowerModeWakesNoAppForABackgroundPush() {
        let book = book()
        guard case .dropped(let reason) = book.arrive(background, device: 0, platform: .ios, condition: .lowPower, at: 0) else {
            Issue.record("a background push woke an app in Low Power Mode")
            return
        }
        #expect(reason.contains("Low Power Mode"))
        #expect(book.arrive(extensionAlert, device: 0, platform: .ios, condition: .lowPower, at: 0) == .deliver(.serviceExtension))
    }

    @Test func alertsAreNotBudgeted() {
        let book = book()
        for second in 0..<10 {
            #expect(
                book.arrive(extensionAlert, device: 0, platform: .ios, condition: .background, at: Double(second))
                    == .deliver(.serviceExtension))
        }
    }

    @Test func dozeDefersNormalPriorityToTheNextMaintenanceWindow() {
        let book = book { $0.dozeWindowSeconds = 900 }
        #expect(book.arrive(highData, device: 0, platform: .android, condition: .doze, at: 5) == .deliver(.launch))
        guard
            case .deferred(.launch, let at, let reason, _, false) = book.arrive(
                normalData, device: 0, platform: .android, condition: .doze, at: 5)
        else {
            Issue.record("a normal-priority message reached a dozing phone at once")
            return
        }
        #expect(at > 5 && at <= 905)
        #expect(at == book.nextDozeWindow(device: 0, after: 5))
        #expect(reason.contains("Doze"))
        // Windows recur every 900 s.
        #expect(book.nextDozeWindow(device: 0, after: at) == at + 900)
        // Awake, a normal-priority message arrives at once; Low Power on Android is Doze.
        #expect(book.arrive(normalData, device: 0, platform: .android, condition: .background, at: 5) == .deliver(.launch))
        if case .deliver = book.arrive(normalData, device: 0, platform: .android, condition: .lowPower, at: 5) {
            Issue.record("battery saver did not defer a normal-priority message")
        }
    }

    @Test func highPriorityMessagesThatShowNothingAreDeprioritized() {
        let book = book()
        for _ in 0..<3 { book.noteHighPriority(device: 0, shown: false) }
        guard case .deferred(_, _, let reason, _, false) = book.arrive(highData, device: 0, platform: .android, condition: .doze, at: 0)
        else {
            Issue.record("a deprioritized high-priority message reached a dozing phone at once")
            return
        }
        #expect(reason.contains("deprioritized"))
        book.noteHighPriority(device: 0, shown: true)
        #expect(book.arrive(highData, device: 0, platform: .android, condition: .doze, at: 0) == .deliver(.launch))
    }

    @Test func aStoppedAndroidAppReceivesNothing() {
        let book = book()
        for push in [highData, IncomingPush(kind: .alert(serviceExtension: false), highPriority: true)] {
            guard case .dropped(let reason) = book.arrive(push, device: 0, platform: .android, condition: .forceQuit, at: 0) else {
                Issue.record("a force-stopped Android app received a message")
                continue
            }
            #expect(reason.contains("force-stopped"))
        }
    }

    @Test func anAndroidNotificationMessageInTheBackgroundIsTheSystems() {
        let book = book()
        let notification = IncomingPush(kind: .alert(serviceExtension: false), highPriority: true)
        #expect(book.arrive(notification, device: 0, platform: .android, condition: .background, at: 0) == .deliver(.systemAlert))
        #expect(book.arrive(notification, device: 0, platform: .android, condition: .foreground, at: 0) == .deliver(.launch))
    }

    @Test func safariRevokesAfterThreePushesInARowThatShowNothingAndChromeNever() {
        let safari = book { $0.safariShare = 1 }
        #expect(safari.browser(of: 4) == .safari)
        #expect(!safari.noteWebPush(device: 4, shown: false))
        #expect(!safari.noteWebPush(device: 4, shown: false))
        // One that showed something starts the count again.
        #expect(!safari.noteWebPush(device: 4, shown: true))
        #expect(!safari.noteWebPush(device: 4, shown: false))
        #expect(!safari.noteWebPush(device: 4, shown: false))
        #expect(safari.noteWebPush(device: 4, shown: false))
        // Revoked once.
        #expect(!safari.noteWebPush(device: 4, shown: false))
        let chrome = book { $0.safariShare = 0 }
        #expect(chrome.browser(of: 4) == .chrome)
        #expect((0..<10).allSatisfy { _ in !chrome.noteWebPush(device: 4, shown: false) })
    }

    @Test func problemsNameTheSetting() {
        var rules = DeviceRules()
        #expect(rules.problem == nil)
        rules.timeScale = 0
        #expect(rules.problem?.contains("time scale") == true)
        rules = DeviceRules()
        rules.backgroundPushesPerHour = 0
        #expect(rules.problem?.contains("background budget") == true)
        rules = DeviceRules()
        rules.dozeWindowSeconds = .infinity
        #expect(rules.problem?.contains("Doze window") == true)
    }
}
