import Testing
import TrendyOnboarding
import TrendyOnboardingTesting

@testable import TrendyApp

/// The CLI's prompter, answering from its flags, keeps the permission-prompter contract.
@Suite struct PermissionPrompterTests {
    @Test func theCommandLinePrompterKeepsTheContract() async {
        await PermissionPrompterContract.verify(make: { answers in
            CLIPermissionPrompter(
                answers: answers.mapValues { answer -> PermissionAnswer in
                    switch answer {
                    case .allow: .allow
                    case .deny: .deny
                    case .notNow: .skip
                    }
                }, interactive: false)
        })
    }
}
