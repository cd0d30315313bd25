//
#include <inlxu//tup.c don			\
	spck(&/* fixtit_l;

#define Bne = smp_pwocessomp_pwocessor_id();	/* released: P003 */
	return 0;B++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++
	r[isorunt*)arg)