/**
 * The caller's side of tau2-bench telecom: a simulated phone in its surroundings, what the
 * caller's tools, the task setup functions and the phone assertions do to a `TelecomUserDB`
 * document, with tau2's result texts (`tau2/domains/telecom/user_tools.py` at commit
 * a2c024725189, described in our words). Results are strings; tau2's user tools answer most
 * problems in their result text rather than failing.
 */
import { ToolError } from '../../src/core/schema/domain.ts';
import { pyRound } from '../../src/core/tau2/py-json.ts';
import {
  NETWORK_MODES,
  NETWORK_STATUSES,
  defaultApnSettings,
  parseApnSettings,
  type NetworkMode,
  type NetworkTechnology,
  type SignalStrength,
  type SimStatus,
  type UserDb,
  type VpnDetails,
} from './model.ts';

type Phone = UserDb['device'];

/** Python's `repr()` of a str (single quotes unless the text has one and no double quote). */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else out += ch;
  }
  return `${quote}${out}${quote}`;
}

/** The default VPN profile `connect_vpn` connects to. */
function defaultVpn(): VpnDetails {
  return { server_address: '192.168.1.1', protocol: 'OpenVPN', server_performance: 'excellent' };
}

/** The phone simulation over one user database document (mutated in place). */
export class PhoneSim {
  constructor(readonly db: UserDb) {}

  get device(): Phone {
    return this.db.device;
  }

  simStatus(): SimStatus {
    return this.device.sim_card_missing ? 'missing' : this.device.sim_card_status;
  }

  /** The network the phone finds after a search: by SIM, preference, surroundings, airplane mode, APN and line. */
  networkSearch(): void {
    const d = this.device;
    const signal = this.db.surroundings.signal_strength;
    const at = (t: NetworkTechnology): SignalStrength => signal.get(t) ?? 'none';
    const offline = () => {
      d.network_connection_status = 'no_service';
      d.network_technology_connected = 'none';
      d.network_signal_strength = 'none';
    };
    if (this.simStatus() === 'active') {
      d.network_connection_status = 'connected';
      const pref = d.network_mode_preference;
      let tech: NetworkTechnology = '4G';
      if (pref === '4g_5g_preferred') tech = at('5G') === 'none' ? '4G' : '5G';
      else if (pref === '3g_only') tech = '3G';
      else if (pref === '2g_only') tech = '2G';
      d.network_technology_connected = tech;
      d.network_signal_strength = at(tech);
    } else offline();
    if (d.airplane_mode) offline();
    if (d.active_apn_settings.apn_name === 'broken') offline();
    if (!this.db.surroundings.line_active) offline();
  }

  statusBar(): string {
    const d = this.device;
    const parts: string[] = [];
    if (d.airplane_mode) parts.push('✈️ Airplane Mode');
    else {
      const bars: Record<SignalStrength, string> = {
        none: '📵 No Signal',
        poor: '📶¹ Poor',
        fair: '📶² Fair',
        good: '📶³ Good',
        excellent: '📶⁴ Excellent',
      };
      parts.push(bars[d.network_signal_strength] ?? '📵 No Signal');
      if (d.network_technology_connected !== 'none') parts.push(d.network_technology_connected);
      if (d.data_enabled && d.network_technology_connected !== 'none') {
        parts.push('📱 Data Enabled');
        if (d.data_saver_mode) parts.push('🔽 Data Saver');
      } else parts.push('📵 Data Disabled');
    }
    if (d.wifi_enabled && d.wifi_connected) parts.push(d.wifi_ssid ? `📡 Connected to ${d.wifi_ssid}` : '📡 Enabled');
    if (d.vpn_connected) parts.push('🔒 VPN Connected');
    parts.push(`🔋 ${d.battery_level}%`);
    return parts.join(' | ');
  }

  private withBar(text: string): string {
    return `${text}\nStatus Bar: ${this.statusBar()}`;
  }

  mobileDataWorking(): boolean {
    const d = this.device;
    const s = this.db.surroundings;
    if (d.airplane_mode || d.network_signal_strength === 'none') return false;
    if (d.network_connection_status === 'no_service') return false;
    if (s.is_abroad && (!d.roaming_enabled || !s.roaming_allowed)) return false;
    if (!d.data_enabled) return false;
    if (s.mobile_data_usage_exceeded) return false;
    return true;
  }

  /** Simulated download speed in Mbps (rounded to 2 decimals) and its label; `null` without a connection. */
  speedTest(): { speed: number | null; label: string } {
    const d = this.device;
    if (!this.mobileDataWorking()) return { speed: null, label: 'No Connection' };
    let factor = d.vpn_connected && d.vpn_details?.server_performance === 'poor' ? 0.1 : 1.0;
    if (d.data_saver_mode) factor *= 0.2;
    const ranges: Record<NetworkTechnology, [number, number]> = {
      '2G': [0.1, 0.4],
      '3G': [1.0, 5.0],
      '4G': [10.0, 100.0],
      '5G': [50.0, 500.0],
      none: [0.0, 0.0],
    };
    const signal: Record<SignalStrength, number> = { poor: 0.2, fair: 0.5, good: 0.8, excellent: 1.0, none: 0.0 };
    const [lo, hi] = ranges[d.network_technology_connected] ?? [0, 0];
    const speed = pyRound(((lo + hi) / 2.0) * (signal[d.network_signal_strength] ?? 0) * factor, 2);
    const label =
      speed < 1 ? 'Very Poor' : speed < 5 ? 'Poor' : speed < 25 ? 'Fair' : speed < 100 ? 'Good' : 'Excellent';
    return { speed, label };
  }

  canSendMms(): boolean {
    const d = this.device;
    if (!this.mobileDataWorking()) return false;
    if (d.network_technology_connected === '2G') return false;
    if (d.wifi_calling_enabled && d.wifi_calling_mms_over_wifi) return false;
    if (d.active_apn_settings.mmsc_url === null) return false;
    const app = d.app_statuses.get('messaging');
    if (!app) return false;
    return app.permissions.storage && app.permissions.sms;
  }

  // --- caller tools ------------------------------------------------------------------------

  checkStatusBar(): string {
    return `Status Bar: ${this.statusBar()}`;
  }

  checkNetworkStatus(): string {
    const d = this.device;
    const onOff = (x: boolean) => (x ? 'ON' : 'OFF');
    const yesNo = (x: boolean) => (x ? 'Yes' : 'No');
    const lines = [
      `Airplane Mode: ${onOff(d.airplane_mode)}`,
      `SIM Card Status: ${this.simStatus()}`,
      `Cellular Connection: ${d.network_connection_status}`,
      `Cellular Signal: ${d.network_signal_strength}`,
      `Cellular Network Type: ${d.network_technology_connected}`,
      `Mobile Data Enabled: ${yesNo(d.data_enabled)}`,
      `Data Roaming Enabled: ${yesNo(d.roaming_enabled)}`,
      `Wi-Fi Radio: ${onOff(d.wifi_enabled)}`,
      `Wi-Fi Connected: ${yesNo(d.wifi_connected)}`,
    ];
    if (d.wifi_connected) lines.push(`Connected Wi-Fi Network: ${d.wifi_ssid === null ? 'None' : d.wifi_ssid}`);
    return lines.join('\n');
  }

  checkNetworkModePreference(): string {
    return `Network Mode Preference: ${this.device.network_mode_preference}`;
  }

  /** Sets the preference and searches; an unknown mode is answered, not failed. */
  setNetworkModePreference(mode: string): string {
    if (!(NETWORK_MODES as readonly string[]).includes(mode)) {
      return this.withBar(
        `Failed to set network mode: '${mode}' is not a valid option. Please use one of: ${NETWORK_MODES.join(', ')}`,
      );
    }
    this.device.network_mode_preference = mode as NetworkMode;
    this.networkSearch();
    return this.withBar(`Preferred Network Mode set to: ${mode}`);
  }

  runSpeedTest(): string {
    const { speed, label } = this.speedTest();
    if (speed === null) return `Speed test failed: ${label || 'Could not determine speed'}.`;
    const advice: Record<string, string> = {
      'Very Poor': 'Connection is very slow. Basic web browsing might be difficult.',
      Poor: 'Connection is slow. Web browsing may be sluggish, streaming difficult.',
      Fair: 'Connection is okay for web browsing and some standard definition streaming.',
      Good: 'Connection is good for most activities, including HD streaming.',
      Excellent: 'Connection is very fast.',
    };
    return `Speed Test Result: ${speed.toFixed(2)} Mbps (${label}). ${advice[label] ?? ''}`;
  }

  /** Flips airplane mode; turning it on drops Wi-Fi and the VPN, turning it off starts a search. */
  toggleAirplane(): boolean {
    const d = this.device;
    const wasOn = d.airplane_mode;
    d.airplane_mode = !wasOn;
    if (wasOn) {
      d.network_connection_status = 'searching';
      if (d.wifi_enabled) this.dropWifi();
    } else {
      this.dropWifi();
      if (d.vpn_connected) this.disconnectVpnState();
    }
    this.networkSearch();
    return d.airplane_mode;
  }

  private dropWifi(): void {
    this.device.wifi_connected = false;
    this.device.wifi_ssid = null;
    this.device.wifi_signal_strength = 'none';
  }

  toggleAirplaneMode(): string {
    return this.withBar(`Airplane Mode is now ${this.toggleAirplane() ? 'ON' : 'OFF'}.`);
  }

  checkSimStatus(): string {
    const texts: Record<SimStatus, string> = {
      active: 'Your SIM card is active and working.',
      missing: 'No SIM card detected in the phone.',
      locked_pin: 'The SIM card is locked with a PIN code.',
      locked_puk: 'The SIM card is locked with a PUK code.',
    };
    return texts[this.simStatus()];
  }

  reseatSimCard(): string {
    this.device.sim_card_missing = false;
    this.networkSearch();
    return this.withBar('SIM card re-seated successfully.');
  }

  toggleDataState(): boolean {
    this.device.data_enabled = !this.device.data_enabled;
    this.networkSearch();
    return this.device.data_enabled;
  }

  toggleData(): string {
    return this.withBar(`Mobile Data is now ${this.toggleDataState() ? 'ON' : 'OFF'}.`);
  }

  toggleRoamingState(): boolean {
    this.device.roaming_enabled = !this.device.roaming_enabled;
    this.networkSearch();
    return this.device.roaming_enabled;
  }

  toggleRoaming(): string {
    return this.withBar(`Data Roaming is now ${this.toggleRoamingState() ? 'ON' : 'OFF'}.`);
  }

  checkDataRestrictionStatus(): string {
    return this.device.data_saver_mode ? 'Data Saver mode is ON (limits data usage).' : 'Data Saver mode is OFF.';
  }

  toggleDataSaverState(): boolean {
    this.device.data_saver_mode = !this.device.data_saver_mode;
    return this.device.data_saver_mode;
  }

  toggleDataSaverMode(): string {
    return this.withBar(`Data Saver Mode is now ${this.toggleDataSaverState() ? 'ON' : 'OFF'}.`);
  }

  checkApnSettings(): string {
    const apn = this.device.active_apn_settings;
    return `Current APN Name: ${apn.apn_name || 'Not Set'}\nMMSC URL (for picture messages): ${apn.mmsc_url || 'Not Set'}\n(These are technical settings, usually best left unchanged.)`;
  }

  /**
   * `set_apn_settings(apn_settings)`: new settings from the given fields (the rest default).
   * @throws ToolError when the fields do not make valid settings (tau2: pydantic's validation error).
   */
  setApnSettings(fields: Record<string, unknown>): string {
    const parsed = parseApnSettings(fields);
    if (!parsed.ok) throw new ToolError(`1 validation error for APNSettings\n${parsed.problem}`);
    this.device.active_apn_settings = parsed.value;
    this.networkSearch();
    return this.withBar(`APN settings set to: ${parsed.value.apn_name}`);
  }

  resetApnSettings(): string {
    this.device.active_apn_settings.reset_at_reboot = true;
    this.networkSearch();
    return this.withBar('APN settings will reset at reboot.');
  }

  checkWifiStatus(): string {
    const d = this.device;
    if (!d.wifi_enabled) return 'Wi-Fi is turned OFF.';
    if (d.wifi_connected)
      return `Wi-Fi is ON and connected to '${d.wifi_ssid === null ? 'None' : d.wifi_ssid}'. Signal strength: ${d.wifi_signal_strength}.`;
    return 'Wi-Fi is ON but not connected to any network.';
  }

  toggleWifi(): string {
    const d = this.device;
    if (d.airplane_mode) return this.withBar('Cannot change Wi-Fi settings while Airplane Mode is ON.');
    d.wifi_enabled = !d.wifi_enabled;
    if (!d.wifi_enabled) this.dropWifi();
    return this.withBar(`Wi-Fi is now ${d.wifi_enabled ? 'ON' : 'OFF'}.`);
  }

  checkWifiCallingStatus(): string {
    return `Wi-Fi Calling is currently turned ${this.device.wifi_calling_enabled ? 'ON' : 'OFF'}.`;
  }

  toggleWifiCalling(): string {
    this.device.wifi_calling_enabled = !this.device.wifi_calling_enabled;
    return this.withBar(`Wi-Fi Calling is now ${this.device.wifi_calling_enabled ? 'ON' : 'OFF'}.`);
  }

  checkVpnStatus(): string {
    const d = this.device;
    if (d.vpn_connected) {
      const v = d.vpn_details;
      if (!v) return 'VPN is ON and connected (no specific details available).';
      const r = (x: string | null) => (x === null ? 'None' : pyStrRepr(x));
      const perf = `<PerformanceLevel.${v.server_performance.toUpperCase()}: ${pyStrRepr(v.server_performance)}>`;
      return `VPN is ON and connected. Details: {'server_address': ${r(v.server_address)}, 'protocol': ${r(v.protocol)}, 'server_performance': ${perf}}`;
    }
    if (d.vpn_enabled_setting) return 'VPN is turned ON in settings, but currently not connected.';
    return 'VPN is turned OFF.';
  }

  /** Connects the default VPN profile; `false` when already connected. */
  connectVpnState(): boolean {
    if (this.device.vpn_connected) return false;
    this.device.vpn_connected = true;
    this.device.vpn_details = defaultVpn();
    return true;
  }

  connectVpn(): string {
    if (!this.connectVpnState()) return 'VPN already connected.';
    return this.withBar('VPN connected successfully.');
  }

  disconnectVpnState(): boolean {
    if (!this.device.vpn_connected) return false;
    this.device.vpn_connected = false;
    this.device.vpn_details = null;
    return true;
  }

  disconnectVpn(): string {
    return this.withBar(
      this.disconnectVpnState() ? 'VPN disconnected successfully.' : 'No active VPN connection to disconnect.',
    );
  }

  checkInstalledApps(): string {
    return `The following apps are installed on the phone: ${[...this.device.app_statuses.keys()].join(', ')}`;
  }

  private granted(appName: string): string[] | null {
    const app = this.device.app_statuses.get(appName);
    if (!app) return null;
    return (['sms', 'storage', 'phone', 'network'] as const).filter((p) => app.permissions[p]);
  }

  checkAppStatus(appName: string): string {
    const perms = this.granted(appName);
    if (perms === null) return `App '${appName}' not found on this phone.`;
    const lines = [`Status for App: ${appName}`];
    if (perms.length === 0) lines.push(' - Permissions: None granted.');
    else {
      lines.push(' - Permissions Granted:');
      for (const p of perms) lines.push(`   - ${p}`);
    }
    return lines.join('\n');
  }

  checkAppPermissions(appName: string): string {
    const perms = this.granted(appName);
    if (perms === null) return `App '${appName}' not found on this phone.`;
    if (perms.length === 0) return `App '${appName}' currently has no permissions granted.`;
    return `App '${appName}' has permission for: ${perms.join(', ')}.`;
  }

  /** Grants (or, with `value` false, removes) a tracked permission; problems are answered in the text. */
  setPermission(appName: string, permission: string, value: boolean): { ok: boolean; message: string } {
    const app = this.device.app_statuses.get(appName);
    const p = permission.toLowerCase();
    const verb = value ? 'grant' : 'remove';
    if (!app) return { ok: false, message: `App '${appName}' not found. Cannot ${verb} permission.` };
    const tracked = ['sms', 'storage', 'phone', 'network'];
    if (!tracked.includes(p)) {
      const tail = value ? `, available permissions: [${tracked.map((t) => pyStrRepr(t)).join(', ')}]` : '.';
      return { ok: false, message: `Permission '${p}' not tracked for app '${appName}'${tail}` };
    }
    app.permissions[p as 'sms'] = value;
    return {
      ok: true,
      message: value
        ? `Permission '${p}' granted to app '${appName}'.`
        : `Permission '${p}' removed from app '${appName}'.`,
    };
  }

  grantAppPermission(appName: string, permission: string): string {
    const { ok, message } = this.setPermission(appName, permission, true);
    return this.withBar(`${ok ? 'Success. ' : 'Error. '}${message}`);
  }

  canSendMmsText(): string {
    return this.canSendMms()
      ? 'Your messaging app can send MMS messages.'
      : 'Your messaging app cannot send MMS messages.';
  }

  rebootDevice(): string {
    const lines: string[] = [];
    if (this.device.active_apn_settings.reset_at_reboot) {
      lines.push('Resetting APN settings...');
      this.device.active_apn_settings = defaultApnSettings();
    }
    lines.push('Restarting network services...');
    this.device.network_connection_status = 'searching';
    this.networkSearch();
    return this.withBar(lines.join('\n'));
  }

  checkPaymentRequest(amount: (x: number) => string): string {
    const r = this.db.surroundings.payment_request;
    if (!r) return 'No payment request has been made.';
    return `You have a payment request for bill ${r.bill_id} of ${amount(r.amount_due)} USD.`;
  }

  makePayment(amount: (x: number) => string): string {
    const r = this.db.surroundings.payment_request;
    if (!r) return 'You do not have a payment request.';
    r.paid = true;
    return `Payment of ${amount(r.amount_due)} USD has been made for bill ${r.bill_id}.`;
  }

  // --- task setup functions ------------------------------------------------------------------

  setAirplane(on: boolean): void {
    if (this.toggleAirplane() !== on) this.toggleAirplane();
  }

  setRoaming(on: boolean): void {
    if (this.toggleRoamingState() !== on) this.toggleRoamingState();
  }

  setDataSaver(on: boolean): void {
    if (this.toggleDataSaverState() !== on) this.toggleDataSaverState();
  }

  /** `turn_data_off`: toggles (searching each time) until data is off. */
  turnDataOff(): void {
    if (this.toggleDataState()) this.toggleDataState();
  }

  unseatSimCard(): void {
    this.device.sim_card_missing = true;
    this.networkSearch();
  }

  lockSimCard(mode: string): void {
    if (mode === 'pin') this.device.sim_card_status = 'locked_pin';
    else if (mode === 'puk') this.device.sim_card_status = 'locked_puk';
    this.networkSearch();
  }

  breakApnSettings(): void {
    this.device.active_apn_settings.apn_name = 'broken';
    this.networkSearch();
  }

  breakApnMmsSetting(): void {
    this.device.active_apn_settings.mmsc_url = null;
  }

  /**
   * `break_vpn`: connects the VPN and makes its server slow. (tau2 makes the server of its shared
   * default profile slow, so a later `connect_vpn` in the same Python process connects slowly
   * too; here a reconnect gets a fresh, fast profile.)
   */
  breakVpn(): void {
    this.connectVpnState();
    if (this.device.vpn_details) this.device.vpn_details.server_performance = 'poor';
  }

  setWifiCalling(enabled: boolean, mmsOverWifi: boolean | null): void {
    this.device.wifi_calling_enabled = enabled;
    if (mmsOverWifi !== null) this.device.wifi_calling_mms_over_wifi = mmsOverWifi;
  }

  // --- assertions ----------------------------------------------------------------------------

  /** `assert_service_status`: the connection status equals `expected` (a NetworkStatus value). */
  serviceStatusIs(expected: string): boolean {
    if (!(NETWORK_STATUSES as readonly string[]).includes(expected))
      throw new ToolError(`${pyStrRepr(expected)} is not a valid NetworkStatus`);
    return this.device.network_connection_status === expected;
  }

  internetSpeedAtLeast(expected: number, label: string | null): boolean {
    const { speed, label: got } = this.speedTest();
    const s = speed ?? 0;
    return label === null ? s >= expected : s >= expected && got.toLowerCase() === label.toLowerCase();
  }
}
