#!/usr/bin/env bash
# Installs the system packages mallvi needs on Debian/Ubuntu (run as root):
#  - a Vulkan driver that renders without a GPU (Mesa lavapipe >= 24.3; bookworm-backports on Debian 12),
#  - libusb (pyrealsense2), Chromium + chromedriver (browser tests of the trace viewer).
# Idempotent: does nothing when everything is already present.
set -euo pipefail

need=()
lavapipe_ok() {
  # lavapipe's ICD file is present and the installed Mesa is >= 24.3
  local ver
  ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || return 1
  ver=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || echo 0)
  dpkg --compare-versions "${ver%%-*}" ge 24.3
}
has_gpu_icd() {
  ls /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json >/dev/null 2>&1
}
if ! lavapipe_ok && ! has_gpu_icd; then need+=(vulkan); fi
dpkg-query -W -f='${Status}' libusb-1.0-0 2>/dev/null | grep -q "install ok installed" || need+=(libusb)
if [ "${MALLVI_SKIP_BROWSER:-0}" != 1 ]; then
  command -v chromium >/dev/null && command -v chromedriver >/dev/null || need+=(chromium)
fi
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "setup_system: missing system packages (${need[*]}); run 'make setup' as root or install them yourself" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
. /etc/os-release
if [[ " ${need[*]} " == *" vulkan "* ]] && [ "${ID:-}" = debian ] && [ "${VERSION_CODENAME:-}" = bookworm ]; then
  if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    cat > /etc/apt/sources.list.d/mallvi-backports.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
fi
apt-get update -qq
pkgs=()
for n in "${need[@]}"; do
  case $n in
    vulkan)
      if [ "${VERSION_CODENAME:-}" = bookworm ]; then
        apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers libvulkan1
      else
        pkgs+=(mesa-vulkan-drivers libvulkan1)
      fi ;;
    libusb) pkgs+=(libusb-1.0-0) ;;
    chromium) pkgs+=(chromium chromium-driver) ;;
  esac
done
[ ${#pkgs[@]} -gt 0 ] && apt-get install -y -qq "${pkgs[@]}"
exit 0
