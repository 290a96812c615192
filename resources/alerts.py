"""Where alerts go: a JSON webhook and, when a token is configured, Slack (dagster-slack)."""

from __future__ import annotations

import dagster as dg

from goldeneval.core.alerts import Alert, AlertDeliveryError, post_json

SLACK_TOKEN_ENV = "SLACK_TOKEN"
"""The Slack bot token, read from the environment only: never a suite value, never shown."""


class AlertsResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """Deliver an :class:`~goldeneval.core.alerts.Alert` to every configured channel."""

    webhook_url: str | None = None
    slack_token: str | None = None
    slack_channel: str | None = None
    slack_api_url: str | None = None
    """Slack Web API base URL; default Slack's own.  For Slack Enterprise grids and tests."""
    ui_url: str = "http://127.0.0.1:3000"
    timeout_s: float = 10.0

    @property
    def channels(self) -> list[str]:
        names = []
        if self.webhook_url:
            names.append("webhook")
        if self.slack_token and self.slack_channel:
            names.append("slack")
        return names

    @property
    def unusable(self) -> str | None:
        """Why a channel the suite configures cannot be used, for the alert sensor to say."""
        if self.slack_channel and not self.slack_token:
            return f"Slack channel {self.slack_channel!r} is configured but ${SLACK_TOKEN_ENV} is not set"
        return None

    def run_url(self, run_id: str) -> str:
        return f"{self.ui_url.rstrip('/')}/runs/{run_id}"

    def deliver(self, alert: Alert) -> list[str]:
        """Send to each channel; returns the channels used.  Raises AlertDeliveryError."""
        if self.webhook_url:
            post_json(self.webhook_url, alert.to_dict(), self.timeout_s)
        if self.slack_token and self.slack_channel:
            from dagster_slack import SlackResource  # only where Slack is configured: slack_sdk is slow to import

            client = SlackResource(token=self.slack_token).get_client()
            if self.slack_api_url:
                client.base_url = self.slack_api_url.rstrip("/") + "/"
            client.timeout = int(self.timeout_s)
            try:
                client.chat_postMessage(channel=self.slack_channel, text=alert.text())
            except Exception as exc:  # slack_sdk raises SlackApiError and urllib errors
                raise AlertDeliveryError(f"Slack: {type(exc).__name__}: {exc}") from None
        return self.channels
