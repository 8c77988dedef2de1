"""Seed 004 eq. 4.1-4.2 and the worked examples of §3.4 / §4.1."""
from lego_build import compose
from lego_build.analysis.kernels import gemm
from lego_build.frontend.adg_build import build_adg
from lego_build.frontend.dataflow import arch_dataflows
from lego_build.frontend.links import candidate_links


def arch(rows, cols, spatial, c, d_s=1):
    return compose([f"arch.rows={rows}", f"arch.cols={cols}", f"arch.dataflows.main.spatial=[{','.join(spatial)}]",
                    f"arch.control_flow=[{c[0]},{c[1]}]", f"arch.d_s={d_s}"]).arch


def _vectors(links):
    return {(tuple(b - a for a, b in zip(lk.src, lk.dst)), lk.delay) for lk in links}


def test_fig_3_1_gemm_link_vectors_and_rejection():
    # fig. 3-1: s0 -> j (n), s1 -> k, c = [1, 1]
    k = gemm(8, 8, 8)
    (df,) = arch_dataflows(arch(2, 2, ["n", "k"], [1, 1]))
    a_links, _ = candidate_links(k, df, "A", 1, 0)
    y_links, _ = candidate_links(k, df, "Y", 1, 0)
    assert _vectors(a_links) == {((1, 0), 1)}
    assert _vectors(y_links) == {((0, 1), 1)}
    # Δs = (-1, 0) also solves M_A M_S Δs = 0, but Δt_bias = Δs·c = -1 < 0: no link
    m_a_m_s = [[sum(r[i] * col[j] for i, col in enumerate(df.m_s())) for j in range(2)] for r in k.tensor("A").matrix]
    assert all(row[0] * -1 + row[1] * 0 == 0 for row in m_a_m_s)
    assert all(lk.src[0] - lk.dst[0] != 1 for lk in a_links)


def test_section_3_4_systolic_8x8_edge_sets():
    adg = build_adg(gemm(8, 8, 8), arch(8, 8, ["k", "n"], [1, 1]))
    e_a = {(lk.src, lk.dst, lk.delay) for lk in adg.net("A").links}
    e_y = {(lk.src, lk.dst, lk.delay) for lk in adg.net("Y").links}
    assert e_a == {((i, j), (i, j + 1), 1) for i in range(8) for j in range(7)}
    assert e_y == {((i, j), (i + 1, j), 1) for i in range(7) for j in range(8)}
    # inputs enter at the first column; partial sums leave at the last row
    assert adg.net("A").ports == tuple((i, 0) for i in range(8))
    assert adg.net("Y").ports == tuple((7, j) for j in range(8))


def test_output_stationary_has_no_output_links_and_all_fus_write():
    adg = build_adg(gemm(16, 16, 16), arch(4, 4, ["m", "n"], [1, 1]))
    assert adg.net("Y").links == () and len(adg.net("Y").ports) == 16
    assert len(adg.net("A").ports) == 4 and len(adg.net("B").ports) == 4


def test_broadcast_control_flow_keeps_one_port_per_chain():
    adg = build_adg(gemm(16, 16, 16), arch(4, 4, ["m", "n"], [0, 0]))
    net = adg.net("A")
    assert sorted(v for v, _ in net.link_vectors) == [(0, -1), (0, 1)]
    assert len(net.ports) == 4 and len(net.links) == 12
    assert all(lk.delay == 0 for lk in net.links)
