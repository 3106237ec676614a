"""An Ethernet port's MAC, PCS and SerDes from the published figures McPAT 1.3 prices its NIU with.

McPAT's network interface unit is a 10 Gb/s Ethernet port made of three parts and nothing else (no packet buffer,
no DMA queues): the MAC, the physical coding sublayer (PCS, McPAT's "front end") and the SerDes. Its figures, per
port at 65 nm (McPAT's technical report and its NIU code cite the sources):

* high-performance port:
  - MAC: 0.915 mm^2, the mean of Niagara 2's die photo (1.53) and Cadence ChipEstimate (0.3); 2.19 nJ a cycle
    (2.19 W at 1 GHz fully active, ChipEstimate); 111,700 gates;
  - PCS: 5.27 mm^2, the mean of Niagara 2's die photo (9.8) and two 10 GbE transceivers at 130 nm (6 and 18 mm^2,
    scaled to 65 nm); 0.27 nJ a cycle (ChipEstimate soft IP); 320,000 gates;
  - SerDes: 1.75 mm^2 (Niagara 2 and ChipEstimate hard IP), which scales only with the feature size (I/O bound);
    10 mW per Gb/s at 90 nm and 1.2 V (ISSCC 2006, "A 100mW 9.6Gb/s transceiver in 90nm CMOS"), with sqrt(F);
    200,000 gates;
* low-power port (ChipEstimate): MAC 0.24 mm^2, 1.257 nJ, 111,700 gates; PCS 0.1 mm^2, 0.6 nJ, 52,000 gates;
  SerDes 0.35 mm^2 (with F^2, as a 130 nm XAUI transceiver against ChipEstimate's hard IP confirms), 21.6 mW per
  Gb/s at 130 nm and 1.2 V, with F; 199,260 gates.

Logic energies scale with F and V^2 from 65 nm and 1.1 V. The leaking devices are the gate counts as NAND2 gates, at
five times the minimum width for a high-performance port and at minimum width for a low-power one (McPAT's sizing).
McPAT 1.3 adds the PCS's gates twice and leaves the SerDes' out (751,700 instead of 631,700 gates for a
high-performance port); here each part counts once.

A port faster than 10 Gb/s is priced as ``gbps / 10`` such ports (assumed: the data path and its lanes widen with
the rate at a given clock); McPAT prices every NIU as one 10 Gb/s port.
"""

from __future__ import annotations

from dataclasses import dataclass

REFERENCE_GBPS = 10.0        # the port McPAT's figures describe


@dataclass(frozen=True)
class PortFigures:
    mac_mm2: float
    pcs_mm2: float
    serdes_mm2: float
    serdes_area_exponent: float     # SerDes area ~ F^exponent from 65 nm
    mac_J: float                    # J a cycle at 65 nm, 1.1 V
    pcs_J: float
    serdes_W_per_gbps: float        # at serdes_node_nm and 1.2 V
    serdes_node_nm: float
    serdes_power_exponent: float    # SerDes power ~ F^exponent from serdes_node_nm
    gates: float                    # MAC + PCS + SerDes
    width_x_min: float              # leaking width of a gate's transistors, in minimum widths


PORT_FIGURES = {
    False: PortFigures(mac_mm2=(1.53 + 0.3) / 2, pcs_mm2=(9.8 + (6 + 18) * (65 / 130) ** 2) / 3,
                       serdes_mm2=1.39 + 0.36, serdes_area_exponent=1.0, mac_J=2.19e-9, pcs_J=0.27e-9,
                       serdes_W_per_gbps=0.01, serdes_node_nm=90.0, serdes_power_exponent=0.5,
                       gates=111_700 + 320_000 + 200_000, width_x_min=5.0),
    True: PortFigures(mac_mm2=0.24, pcs_mm2=0.1, serdes_mm2=0.35, serdes_area_exponent=2.0, mac_J=1.257e-9,
                      pcs_J=0.6e-9, serdes_W_per_gbps=0.0216, serdes_node_nm=130.0, serdes_power_exponent=1.0,
                      gates=111_700 + 52_000 + 199_260, width_x_min=1.0),
}


def port_area_mm2(low_power: bool, node_nm_area: float, gbps: float) -> float:
    """One port's MAC, PCS and SerDes area (mm^2)."""
    f = PORT_FIGURES[bool(low_power)]
    s = node_nm_area / 65.0
    one = (f.mac_mm2 + f.pcs_mm2) * s * s + f.serdes_mm2 * s ** f.serdes_area_exponent
    return one * gbps / REFERENCE_GBPS


def port_logic_J_per_cycle(low_power: bool, node_nm: float, vdd: float, gbps: float) -> float:
    """One port's MAC and PCS energy a cycle of the NIU clock, fully active (J)."""
    f = PORT_FIGURES[bool(low_power)]
    return (f.mac_J + f.pcs_J) * (node_nm / 65.0) * (vdd / 1.1) ** 2 * gbps / REFERENCE_GBPS


def port_serdes_W(low_power: bool, node_nm: float, vdd: float, gbps: float) -> float:
    """One port's SerDes power at its full rate (W)."""
    f = PORT_FIGURES[bool(low_power)]
    return (f.serdes_W_per_gbps * REFERENCE_GBPS * (node_nm / f.serdes_node_nm) ** f.serdes_power_exponent
            * (vdd / 1.2) ** 2 * gbps / REFERENCE_GBPS)


def port_leaking_gates(low_power: bool, gbps: float) -> tuple[float, float]:
    """One port's gates and their leaking width in minimum transistor widths (gates, width multiple)."""
    f = PORT_FIGURES[bool(low_power)]
    return f.gates * gbps / REFERENCE_GBPS, f.width_x_min


def load_fraction(rx_bytes: float, tx_bytes: float, ports: int, gbps: float, seconds: float) -> float:
    """The share of the ports' full-duplex capacity the counted bytes used over ``seconds`` (not clipped at 1: a
    run's counts price as counted, as every other structure's do)."""
    if seconds <= 0 or ports <= 0 or gbps <= 0:
        return 0.0
    return (rx_bytes + tx_bytes) * 8.0 / (2.0 * ports * gbps * 1e9 * seconds)

